//! Page-locked host memory, asynchronous copies on streams, events: on the CPU executor and on a
//! GPU (the PTX emulator in CI).
//!
//! The emulator runs every copy and kernel on the calling thread when it is queued, so its
//! events time each piece of work in full and spans on different streams never overlap there:
//! what these tests check is order and correctness; overlap itself shows only on a GPU (the
//! main job's streamed row and timeline).

mod support;

use ferrocuda::kernels::{saxpy, vector_add};
use ferrocuda::{launch, Event, Module, KERNELS};

fn modules(test: &str) -> Vec<Module> {
    support::on_every_device(test, &KERNELS)
}

#[test]
fn a_pinned_buffer_is_a_host_slice_for_launches() {
    for kernels in modules("a_pinned_buffer_is_a_host_slice_for_launches") {
        let device = kernels.device();
        let n = 1000;
        let a = device
            .pin(&(0..n).map(|i| i as f32).collect::<Vec<_>>())
            .unwrap();
        let b = device.pin(&vec![0.5f32; n]).unwrap();
        let mut out = device.alloc_pinned::<f32>(n).unwrap();
        assert_eq!(out.is_page_locked(), device.is_gpu());
        assert!(out.iter().all(|&x| x == 0.0), "zeroed");
        launch!(kernels, vector_add[n.div_ceil(256), 256](&a, &b, &mut out)).unwrap();
        for (i, &x) in out.iter().enumerate() {
            assert_eq!(x, i as f32 + 0.5, "{device}: element {i}");
        }
        // Empty buffers are fine too.
        assert!(device.alloc_pinned::<f64>(0).unwrap().is_empty());
    }
}

#[test]
fn copies_and_a_kernel_on_two_streams_ordered_by_an_event_give_the_reference() {
    for kernels in modules("copies_and_a_kernel_on_two_streams_ordered_by_an_event") {
        let device = kernels.device();
        let n = support::size_for(device, 100_003, 4_099);
        let (mut rng, seed) = support::rng();
        let x = support::random_f32(&mut rng, n);
        let y = support::random_f32(&mut rng, n);
        let (copy, compute) = (device.new_stream().unwrap(), device.new_stream().unwrap());

        let mut x_dev = device.alloc_zeroed::<f32>(n).unwrap();
        let mut y_dev = device.alloc_zeroed::<f32>(n).unwrap();
        let x_up = copy
            .upload_async(device.pin(&x).unwrap(), &mut x_dev)
            .unwrap();
        let y_up = copy
            .upload_async(device.pin(&y).unwrap(), &mut y_dev)
            .unwrap();
        // The kernel's stream waits for the copies on the device, not on the host.
        compute.wait(y_up.event()).unwrap();
        launch!(kernels, saxpy[n.div_ceil(256), 256, &compute](2.5f32, &x_dev, &mut y_dev))
            .unwrap();
        let mut done = device.new_event().unwrap();
        compute.record(&mut done).unwrap();
        copy.wait(&done).unwrap();
        let back = copy
            .download_async(&y_dev, device.alloc_pinned(n).unwrap())
            .unwrap();
        // Dropping the device buffers now is safe: their memory goes after the queued work.
        drop((x_dev, y_dev));
        let back = back.wait().unwrap();
        for i in 0..n {
            let expected = 2.5f32.mul_add(x[i], y[i]);
            assert!(
                back[i] == expected,
                "{device} seed {seed}: element {i}: {} vs {expected}",
                back[i]
            );
        }
        // The uploads' buffers come back untouched.
        assert_eq!(&x_up.wait().unwrap()[..], &x[..]);
        assert!(done.query().unwrap());
    }
}

#[test]
fn a_dropped_or_leaked_pending_copy_never_frees_memory_under_the_copy() {
    for kernels in modules("a_dropped_or_leaked_pending_copy") {
        let device = kernels.device();
        let stream = device.new_stream().unwrap();
        let source = device.upload(&[1u32, 2, 3, 4]).unwrap();
        // Dropped: waits for the copy, then frees the pinned buffer.
        drop(
            stream
                .download_async(&source, device.alloc_pinned(4).unwrap())
                .unwrap(),
        );
        // Leaked: the pinned buffer is never freed, which is safe.
        std::mem::forget(
            stream
                .download_async(&source, device.alloc_pinned(4).unwrap())
                .unwrap(),
        );
        stream.synchronize().unwrap();
        let back = stream
            .download_async(&source, device.alloc_pinned(4).unwrap())
            .unwrap()
            .wait()
            .unwrap();
        assert_eq!(&back[..], &[1, 2, 3, 4]);
    }
}

#[test]
fn a_copy_between_different_lengths_or_devices_is_an_error() {
    for kernels in modules("a_copy_between_different_lengths_or_devices") {
        let device = kernels.device();
        let stream = device.new_stream().unwrap();
        let mut buffer = device.alloc_zeroed::<f32>(5).unwrap();
        let error = stream
            .upload_async(device.alloc_pinned(4).unwrap(), &mut buffer)
            .unwrap_err();
        assert!(error.to_string().contains("upload_async"), "{error}");
        if device.is_gpu() {
            let cpu = ferrocuda::Device::cpu();
            let error = cpu
                .new_stream()
                .unwrap()
                .upload_async(cpu.alloc_pinned(5).unwrap(), &mut buffer)
                .unwrap_err();
            assert!(
                matches!(error, ferrocuda::Error::WrongDevice { .. }),
                "{error}"
            );
            let mut cpu_event = cpu.new_event().unwrap();
            assert!(stream.record(&mut cpu_event).is_err());
        }
        let never = device.new_event().unwrap();
        let mut recorded = device.new_event().unwrap();
        stream.record(&mut recorded).unwrap();
        let error = Event::elapsed(&never, &recorded).unwrap_err();
        assert!(error.to_string().contains("recorded"), "{error}");
    }
}

#[test]
fn events_record_the_copy_and_kernel_spans_in_order() {
    for kernels in modules("events_record_the_copy_and_kernel_spans_in_order") {
        let device = kernels.device();
        let n = support::size_for(device, 1 << 22, 1 << 14);
        let stream = device.new_stream().unwrap();
        let mut marks: Vec<Event> = (0..4).map(|_| device.new_event().unwrap()).collect();
        let mut on_device = device.alloc_zeroed::<f32>(n).unwrap();
        let mut out = device.alloc_zeroed::<f32>(n).unwrap();
        stream.record(&mut marks[0]).unwrap();
        let up = stream
            .upload_async(device.pin(&vec![1.0f32; n]).unwrap(), &mut on_device)
            .unwrap();
        stream.record(&mut marks[1]).unwrap();
        launch!(kernels, vector_add[n.div_ceil(256), 256, &stream](&on_device, &on_device, &mut out))
            .unwrap();
        stream.record(&mut marks[2]).unwrap();
        let down = stream.download_async(&out, up.wait().unwrap()).unwrap();
        stream.record(&mut marks[3]).unwrap();
        let host = down.wait().unwrap();
        assert!(host.iter().all(|&x| x == 2.0));
        let span = |a: usize, b: usize| Event::elapsed(&marks[a], &marks[b]).unwrap();
        let (copy_in, kernel, copy_out, all) = (span(0, 1), span(1, 2), span(2, 3), span(0, 3));
        println!("{device}: copy in {copy_in:?}, kernel {kernel:?}, copy out {copy_out:?}");
        // One stream runs its work in order: the spans add up to the whole.
        let sum = copy_in + kernel + copy_out;
        assert!(
            sum.abs_diff(all).as_secs_f64() <= 1e-4 * all.as_secs_f64().max(1e-3),
            "{sum:?} vs {all:?}"
        );
        if device.is_gpu() {
            // The emulator interprets every thread: the kernel span is never empty.
            assert!(kernel > std::time::Duration::ZERO);
        }
        // Device::time keeps working next to events.
        let ((), took) = device.time(|| Ok(())).unwrap();
        assert!(took < all + std::time::Duration::from_secs(1));
    }
}

#[test]
fn a_stream_dropped_with_a_kernel_queued_leaves_its_buffers_right() {
    // On a GPU the last handle's drop waits for the kernel, so the default stream's copy below
    // never reads the buffer under it; the emulator and the CPU run the kernel when queued, so
    // there they check the same code path without the race.
    for kernels in modules("a_stream_dropped_with_a_kernel_queued") {
        let device = kernels.device();
        let n = support::size_for(device, 1 << 20, 4096);
        let a = device.upload(&vec![1.5f32; n]).unwrap();
        let mut out = device.alloc_zeroed::<f32>(n).unwrap();
        let stream = device.new_stream().unwrap();
        launch!(kernels, vector_add[n.div_ceil(256), 256, &stream](&a, &a, &mut out)).unwrap();
        drop(stream);
        drop(a);
        assert!(out.to_vec().unwrap().iter().all(|&x| x == 3.0), "{device}");
    }
}
