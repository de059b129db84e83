// S5 (issue 14): a host buffer must not be written, freed or read while an asynchronous copy
// queued on a stream still uses it. The pending copy owns it (so a leaked guard cannot end a
// borrow early): each use below is a use of a moved value, until `.wait()` hands it back. A
// device buffer may be dropped while a copy is queued: its memory is freed after the copy
// (tests/streams.rs).
use ferrocuda_host::Device;

fn main() {
    let device = Device::cpu();
    let stream = device.new_stream().unwrap();
    let mut on_device = device.alloc_zeroed::<f32>(4).unwrap();

    let mut written = device.pin(&[1.0f32; 4]).unwrap();
    let pending = stream.upload_async(written, &mut on_device).unwrap();
    written[0] = 2.0; // written while the copy reads it
    let _ = pending.wait();

    let freed = device.pin(&[1.0f32; 4]).unwrap();
    let pending = stream.upload_async(freed, &mut on_device).unwrap();
    drop(freed); // freed while the copy reads it
    let _ = pending.wait();

    let read = device.alloc_pinned::<f32>(4).unwrap();
    let pending = stream.download_async(&on_device, read).unwrap();
    let _peek = read[0]; // read while the copy writes it
    let _ = pending.wait();
}
