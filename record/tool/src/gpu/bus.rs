//! A GPU's PCI bus location, as the NVIDIA driver shows it: each GPU has a
//! folder under `/proc/driver/nvidia/gpus`, whose `information` file gives
//! its UUID (`GPU UUID: GPU-…`) and bus location (`Bus Location: …`, also
//! the folder's name). Read from files, not asked of the driver: CUPTI
//! hands the tool its device records inside its own calls, where calling
//! the driver back could wait on what CUPTI holds.

use std::path::Path;

/// Where the NVIDIA driver describes its GPUs.
const GPUS: &str = "/proc/driver/nvidia/gpus";

/// The bus location of the GPU whose UUID is `uuid`
/// ([`nvtxr_record_format::gpu::uuid_text`]'s form); empty when not found
/// (no NVIDIA driver's files here, as in a container without them).
pub fn bus_location(uuid: &str) -> String {
    bus_location_in(Path::new(GPUS), uuid)
}

fn bus_location_in(folder: &Path, uuid: &str) -> String {
    if uuid.is_empty() {
        return String::new();
    }
    let Ok(entries) = std::fs::read_dir(folder) else {
        return String::new();
    };
    for entry in entries.flatten() {
        let Ok(text) = std::fs::read_to_string(entry.path().join("information")) else {
            continue;
        };
        let (mut its_uuid, mut bus) = (None, None);
        for (key, value) in text.lines().filter_map(|l| l.split_once(':')) {
            match key.trim() {
                "GPU UUID" => its_uuid = Some(value.trim()),
                "Bus Location" => bus = Some(value.trim().to_string()),
                _ => {}
            }
        }
        let its_uuid = its_uuid.map(|u| u.strip_prefix("GPU-").unwrap_or(u));
        if its_uuid.is_some_and(|u| u.eq_ignore_ascii_case(uuid)) {
            return bus.unwrap_or_else(|| entry.file_name().to_string_lossy().into_owned());
        }
    }
    String::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The driver's folder as it is on a machine with two GPUs (the second
    /// file without its bus line: the folder's name says it).
    #[test]
    fn a_gpus_bus_location_is_found_by_its_uuid() {
        let dir = tempfile::tempdir().unwrap();
        let gpu = |bus: &str, text: &str| {
            std::fs::create_dir(dir.path().join(bus)).unwrap();
            std::fs::write(dir.path().join(bus).join("information"), text).unwrap();
        };
        gpu(
            "0000:19:00.0",
            "Model: \t\t NVIDIA H200\nIRQ:   \t\t 1234\nGPU UUID: \t GPU-2D5B5B7A-0000-1111-2222-333344445555\n\
             Video BIOS: \t 96.00.9f.00.01\nBus Type: \t PCIe\nDMA Size: \t 52 bits\n\
             DMA Mask: \t 0xfffffffffffff\nBus Location: \t 0000:19:00.0\nDevice Minor: \t 0\n",
        );
        gpu(
            "0000:3b:00.0",
            "Model: \t\t NVIDIA H200\nGPU UUID: \t GPU-99999999-0000-1111-2222-333344445555\n",
        );
        let find = |uuid| bus_location_in(dir.path(), uuid);
        assert_eq!(find("2d5b5b7a-0000-1111-2222-333344445555"), "0000:19:00.0");
        assert_eq!(find("99999999-0000-1111-2222-333344445555"), "0000:3b:00.0");
        assert_eq!(find("12345678-0000-1111-2222-333344445555"), "");
        assert_eq!(find(""), "");
        assert_eq!(bus_location_in(&dir.path().join("none"), "2d5b5b7a"), "");
    }
}
