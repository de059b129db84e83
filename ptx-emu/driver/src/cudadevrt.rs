//! The emulator's stand-in for the cooperative-groups entry points of CUDA's device runtime
//! library (`libcudadevrt.a`), which holds machine code the emulator cannot run: PTX written by
//! hand, linked in that library's place by `cuLinkAddFile`/`cuLinkAddData` ([`crate::link`]).
//! See docs/emulator.md, "Judged by Numba"; tested by `tests/cudadevrt.rs`.

/// The PTX module: `cudaCGGetIntrinsicHandle` and `cudaCGSynchronize` (its comments say how).
pub(crate) const PTX: &str = r#"// The ferrocuda emulator's stand-in for the cooperative-groups entry points of CUDA's device
// runtime library (libcudadevrt.a), which holds machine code the emulator cannot run. Linked
// in place of that library by cuLinkAddFile/cuLinkAddData (src/link.rs); see docs/emulator.md,
// "Judged by Numba". Only what Numba's `cuda.cg.this_grid().sync()` calls:
//
//   cudaCGGetIntrinsicHandle(scope) -> the grid's barrier (two words of this module's global
//                                      memory: blocks arrived, generation)
//   cudaCGSynchronize(handle, flags) -> every block of the grid waits for all (a sense-counting
//                                      barrier: the last block to arrive resets the count and
//                                      advances the generation the others spin on); 0
//
// A grid barrier needs every block resident at once: a cooperative launch
// (cuLaunchCooperativeKernel), as on a GPU.
.version 6.0
.target sm_70
.address_size 64

.global .align 4 .u32 __ferrocuda_cudadevrt_grid_barrier[2];

.visible .func (.param .b64 handle) cudaCGGetIntrinsicHandle(.param .b32 scope)
{
	.reg .b64 %a<2>;
	mov.u64 %a0, __ferrocuda_cudadevrt_grid_barrier;
	cvta.global.u64 %a1, %a0;
	st.param.b64 [handle], %a1;
	ret;
}

.visible .func (.param .b32 status) cudaCGSynchronize(.param .b64 handle, .param .b32 flags)
{
	.reg .pred %p<3>;
	.reg .b32 %r<12>;
	.reg .b64 %h;
	ld.param.b64 %h, [handle];
	bar.sync 0;
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, %tid.y;
	mov.u32 %r3, %tid.z;
	or.b32 %r1, %r1, %r2;
	or.b32 %r1, %r1, %r3;
	setp.ne.u32 %p0, %r1, 0;
	@%p0 bra $done;
	ld.volatile.u32 %r4, [%h+4];
	mov.u32 %r5, %nctaid.x;
	mov.u32 %r6, %nctaid.y;
	mov.u32 %r7, %nctaid.z;
	mul.lo.u32 %r5, %r5, %r6;
	mul.lo.u32 %r5, %r5, %r7;
	membar.gl;
	atom.add.u32 %r8, [%h], 1;
	add.u32 %r8, %r8, 1;
	setp.ne.u32 %p1, %r8, %r5;
	@%p1 bra $spin;
	st.volatile.u32 [%h], 0;
	membar.gl;
	atom.add.u32 %r9, [%h+4], 1;
	bra $done;
$spin:
	ld.volatile.u32 %r10, [%h+4];
	setp.eq.u32 %p2, %r10, %r4;
	@%p2 bra $spin;
$done:
	membar.gl;
	bar.sync 0;
	mov.u32 %r11, 0;
	st.param.b32 [status], %r11;
	ret;
}
"#;
