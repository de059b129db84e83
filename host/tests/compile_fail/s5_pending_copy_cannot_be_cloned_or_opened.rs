// S5 (issue 14): what a pending copy holds is reachable only through `wait`, after the copy: a
// `Pending` cannot be cloned, nor its buffer taken out.
use ferrocuda_host::Device;

fn main() {
    let device = Device::cpu();
    let stream = device.new_stream().unwrap();
    let mut on_device = device.alloc_zeroed::<f32>(4).unwrap();
    let pending = stream
        .upload_async(device.pin(&[1.0f32; 4]).unwrap(), &mut on_device)
        .unwrap();
    let _twice = pending.clone();
    let _inside = pending.value;
}
