//! The check of a launch's arguments against the kernel's parameters, before anything is packed:
//! the last line of defence for the (pointer, length) pairs a kernel trusts.

use super::arg::Arg;
use super::kernel_arg::LaunchArg;
use crate::error::{Error, Result};
use ferrocuda_std::abi::{KernelInfo, Param, ParamClass};

/// Checks each argument against the kernel's parameter it is passed for, before anything is
/// packed: the kind (a read-only view is never given for an `Out`), the element size, the byte
/// length (`len × size_of::<T>()`, computed without overflow) and the alignment of the memory.
/// The types already make a mismatch hard to write; this holds in release builds too, and
/// whatever the kernel handle claims.
pub(crate) fn check_args(info: &KernelInfo, args: &[LaunchArg<'_>]) -> Result<()> {
    if args.len() != info.params.len() {
        return Err(Error::InvalidArgument {
            kernel: info.name,
            param: "(all)",
            detail: format!(
                "{} arguments for {} parameters",
                args.len(),
                info.params.len()
            ),
        });
    }
    for (param, arg) in info.params.iter().zip(args) {
        check_arg(param, arg).map_err(|detail| Error::InvalidArgument {
            kernel: info.name,
            param: param.name,
            detail,
        })?;
    }
    Ok(())
}

/// What is wrong with `arg` for `param`, if anything.
fn check_arg(param: &Param, arg: &LaunchArg<'_>) -> core::result::Result<(), String> {
    let kind = match &arg.arg {
        Arg::HostSlice { .. } | Arg::GpuSlice { .. } | Arg::CudarcSlice { .. } => ParamClass::Slice,
        Arg::HostOutput { .. } | Arg::GpuOutput { .. } | Arg::CudarcOutput { .. } => {
            ParamClass::Output
        }
        Arg::Scalar(_) => ParamClass::Scalar,
    };
    if kind != param.class {
        return Err(format!(
            "a {} was passed for a {} parameter",
            class_name(kind),
            class_name(param.class)
        ));
    }
    if arg.dims() != param.dims {
        return Err(format!(
            "a view of {} axes was passed for `{}` of {} axes",
            arg.dims(),
            param.name,
            param.dims
        ));
    }
    if let Arg::Scalar(slot) = &arg.arg {
        return match slot.size() == param.elem_size {
            true => Ok(()),
            false => Err(format!(
                "a scalar of {} bytes was passed for `{}` of {} bytes",
                slot.size(),
                param.type_name,
                param.elem_size
            )),
        };
    }
    let element = arg.element.ok_or("a slice without an element type")?;
    if element.size != param.elem_size {
        return Err(format!(
            "elements of `{}` ({} bytes) were passed for `{}` ({} bytes)",
            element.name, element.size, param.type_name, param.elem_size
        ));
    }
    let len = arg.arg.elements().unwrap_or(0);
    let needed = len.checked_mul(param.elem_size).ok_or_else(|| {
        format!(
            "{len} elements of {} bytes overflow the address space",
            param.elem_size
        )
    })?;
    let (available, address) = match &arg.arg {
        Arg::HostSlice { bytes, .. } => (bytes.len(), Some(bytes.as_ptr() as usize)),
        Arg::HostOutput { bytes, .. } => (bytes.len(), Some(bytes.as_ptr() as usize)),
        Arg::GpuSlice { buffer, offset, .. } => (buffer.len_bytes().saturating_sub(*offset), None),
        Arg::GpuOutput { buffer, offset, .. } => (buffer.len_bytes().saturating_sub(*offset), None),
        Arg::CudarcSlice { slice, .. } => (slice.byte_len(), None),
        Arg::CudarcOutput { slice, .. } => (slice.byte_len(), None),
        Arg::Scalar(_) => unreachable!("scalars returned above"),
    };
    if available < needed {
        return Err(format!(
            "{len} elements of `{}` need {needed} bytes but the memory has {available}",
            param.type_name
        ));
    }
    // A 2D or 3D view: every index below its shape is in bounds of `len` (its constructor
    // checked this too; the kernel indexes unchecked once the coordinates are below the shape).
    if let Some(shape) = arg.shape {
        shape.check(len)?;
    }
    // Device allocations are aligned to 256 bytes, and a view of one starts a whole number of
    // elements in; host memory is aligned to its own element type.
    if let Some(address) = address.filter(|_| len > 0) {
        if !address.is_multiple_of(param.elem_align.max(1)) {
            return Err(format!(
                "the memory at {address:#x} is not aligned to {} bytes, as `{}` needs",
                param.elem_align, param.type_name
            ));
        }
    }
    Ok(())
}

fn class_name(class: ParamClass) -> &'static str {
    match class {
        ParamClass::Slice => "read-only slice (`&[T]`)",
        ParamClass::Output => "output (`Out<T>`, from memory borrowed `&mut`)",
        ParamClass::Scalar => "scalar",
    }
}

#[cfg(test)]
mod tests {
    //! The checks the types already rule out through the public API (a view shorter than its
    //! length, misaligned memory), on hand-made arguments.
    use super::*;
    use crate::args::arg::ParamSlot;
    use crate::args::kernel_arg::Element;

    fn slice_param() -> Param {
        Param::slice::<u32>("x", "u32")
    }

    fn host_slice(bytes: &[u8], len: usize) -> LaunchArg<'_> {
        LaunchArg::plain(Arg::HostSlice { bytes, len }, Some(Element::of::<u32>()))
    }

    #[test]
    fn an_array_needs_a_parameter_of_its_axes_and_a_shape_that_fits() {
        let words = [0u32; 12];
        let bytes: &[u8] = bytemuck::cast_slice(&words);
        let array = |shape| LaunchArg {
            shape: Some(shape),
            ..host_slice(bytes, 12)
        };
        let two = Param::array::<u32>("a", "u32", 2);
        let fits = crate::array::Shape::new([3, 4], [4, 1]);
        assert!(check_arg(&two, &array(fits)).is_ok());
        // A 3 × 4 shape with a pitch of 5 reaches element 13 of 12.
        let detail = check_arg(&two, &array(crate::array::Shape::new([3, 4], [5, 1]))).unwrap_err();
        assert!(
            detail.contains("needs 14 elements, but the memory has 12"),
            "{detail}"
        );
        // Neither a plain slice for a 2D parameter nor a 2D view for a 3D or 1D one.
        let detail = check_arg(&two, &host_slice(bytes, 12)).unwrap_err();
        assert!(
            detail.contains("a view of 1 axes was passed for `a` of 2 axes"),
            "{detail}"
        );
        let three = Param::array::<u32>("a", "u32", 3);
        assert!(check_arg(&three, &array(fits)).is_err());
        assert!(check_arg(&slice_param(), &array(fits)).is_err());
    }

    #[test]
    fn memory_shorter_than_its_length_is_refused() {
        let bytes = [0u32; 2];
        let bytes: &[u8] = bytemuck::cast_slice(&bytes);
        let detail = check_arg(&slice_param(), &host_slice(bytes, 3)).unwrap_err();
        assert!(
            detail.contains("3 elements of `u32` need 12 bytes but the memory has 8"),
            "{detail}"
        );
        assert!(check_arg(&slice_param(), &host_slice(bytes, 2)).is_ok());
    }

    #[test]
    fn a_length_whose_byte_count_overflows_is_refused() {
        let detail = check_arg(&slice_param(), &host_slice(&[], usize::MAX / 2)).unwrap_err();
        assert!(detail.contains("overflow"), "{detail}");
    }

    #[test]
    fn misaligned_memory_is_refused() {
        let words = [0u32; 3];
        let bytes: &[u8] = bytemuck::cast_slice(&words);
        let detail = check_arg(&slice_param(), &host_slice(&bytes[1..9], 2)).unwrap_err();
        assert!(detail.contains("is not aligned to 4 bytes"), "{detail}");
        // An empty slice may be anywhere: the kernel never dereferences it.
        assert!(check_arg(&slice_param(), &host_slice(&bytes[1..1], 0)).is_ok());
    }

    #[test]
    fn a_scalar_of_another_size_is_refused() {
        let arg = LaunchArg::plain(Arg::Scalar(ParamSlot::new(1u64)), None);
        let detail = check_arg(&Param::scalar::<f32>("a", "f32"), &arg).unwrap_err();
        assert!(
            detail.contains("a scalar of 8 bytes was passed for `f32` of 4 bytes"),
            "{detail}"
        );
    }
}
