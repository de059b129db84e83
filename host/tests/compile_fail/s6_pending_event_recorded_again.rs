// S6 (issue 29, P1): a `Pending` hands its buffer back once the event it recorded after its
// copy completes. Recording that event again on another stream moved the point it marks, so
// `wait()` returned the buffer while the copy was still queued: a download read stale data
// that then changed behind a `&[f32]`, an upload sent what the program wrote afterwards.
// Recording takes `&mut Event`, and `Pending::event` lends only `&Event`.
use ferrocuda_host::Device;

fn main() {
    let device = Device::cpu();
    let (copy, other) = (device.new_stream().unwrap(), device.new_stream().unwrap());
    let on_device = device.alloc_zeroed::<f32>(4).unwrap();
    let pending = copy
        .download_async(&on_device, device.alloc_pinned::<f32>(4).unwrap())
        .unwrap();
    other.record(pending.event()).unwrap(); // the event now marks `other`'s queue, not the copy
    let _filled = pending.wait().unwrap();
}
