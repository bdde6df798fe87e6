//! `cargo xtask install`: installs nvtxr into a prefix for C and C++ users: the shared library (with its SONAME symlinks),
//! the static library, the headers, pkg-config files, a CMake package, the
//! drop-in `libnvToolsExt.so.1` / `libnvtx3interop.so.1`, and `nvtxr record`
//! (`bin/nvtxr` with its tool `lib/libnvtxr_record.so`).

use crate::artifacts::{artifacts, root, COMPAT_LIBRARIES, STATIC_LINK_FLAGS};
pub use crate::version::{nvtxr_version, soname, soname_of};
use std::path::{Path, PathBuf};

/// The headers C and C++ users get.
pub const HEADERS: [&str; 3] = ["nvtxr.h", "nvtxr_scope.h", "nvtxr.hpp"];

/// The static library's link dependencies as CMake library names (`-lm` -> `m`).
fn cmake_libraries() -> String {
    STATIC_LINK_FLAGS
        .iter()
        .map(|f| f.trim_start_matches("-l"))
        .collect::<Vec<_>>()
        .join(";")
}

fn write(path: &Path, contents: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, contents).unwrap();
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(to);
    std::fs::copy(from, to)
        .unwrap_or_else(|e| panic!("copying {} to {}: {e}", from.display(), to.display()));
}

/// [`copy`], then the debug info taken out (`strip --strip-debug`: the
/// symbols stay), as distributions install: a 29 MB `nvtxr` becomes 6 MB.
/// With `keep_debug`, the debug info is split off first into
/// `.debug/NAME.debug` beside the file, where gdb looks for it (the file
/// names it in its `.gnu_debuglink`). A static library is only stripped.
fn copy_stripped(from: &Path, to: &Path, keep_debug: bool) {
    copy(from, to);
    let run = |what: &str, args: &[&std::ffi::OsStr]| {
        let done = std::process::Command::new(what).args(args).status();
        assert!(
            done.is_ok_and(|s| s.success()),
            "{what} {args:?} failed ({what} is in binutils)"
        );
    };
    let split = keep_debug && to.extension().is_none_or(|e| e != "a");
    let debug = to.parent().unwrap().join(".debug").join(format!(
        "{}.debug",
        to.file_name().unwrap().to_string_lossy()
    ));
    if split {
        std::fs::create_dir_all(debug.parent().unwrap()).unwrap();
        run(
            "objcopy",
            &[
                "--only-keep-debug".as_ref(),
                to.as_os_str(),
                debug.as_os_str(),
            ],
        );
    }
    run("strip", &["--strip-debug".as_ref(), to.as_os_str()]);
    if split {
        let link = format!("--add-gnu-debuglink={}", debug.display());
        run("objcopy", &[link.as_ref(), to.as_os_str()]);
    }
}

fn symlink(target: &str, link: &Path) {
    let _ = std::fs::remove_file(link);
    std::os::unix::fs::symlink(target, link).unwrap();
}

/// Installs into `destdir` + `prefix` (files refer to `prefix`), without
/// debug info (kept in `.debug/` files with `keep_debug`); returns the root
/// the files went to.
pub fn install(prefix: &Path, destdir: Option<&Path>, keep_debug: bool) -> PathBuf {
    assert!(prefix.is_absolute(), "PREFIX must be an absolute path");
    let a = artifacts();
    let version = nvtxr_version();
    let soname = soname();
    let major = version.split('.').next().unwrap().to_string();
    let base = match destdir {
        Some(d) => d.join(prefix.strip_prefix("/").unwrap()),
        None => prefix.to_path_buf(),
    };
    let lib = base.join("lib");

    let real = format!("libnvtxr.so.{version}");
    copy_stripped(&a.lib_dir.join("libnvtxr.so"), &lib.join(&real), keep_debug);
    symlink(&real, &lib.join(&soname));
    symlink(&soname, &lib.join("libnvtxr.so"));
    copy_stripped(&a.static_lib, &lib.join("libnvtxr.a"), keep_debug);
    for (name, _) in COMPAT_LIBRARIES {
        copy_stripped(&a.compat_dir.join(name), &lib.join(name), keep_debug);
        symlink(name, &lib.join(name.trim_end_matches(".1")));
    }
    copy_stripped(&a.nvtxr, &base.join("bin/nvtxr"), keep_debug);
    copy_stripped(&a.record_tool, &lib.join("libnvtxr_record.so"), keep_debug);
    for header in HEADERS {
        copy(
            &root().join("include").join(header),
            &base.join("include").join(header),
        );
    }

    let static_libs = STATIC_LINK_FLAGS.join(" ");
    let pc_head = format!(
        "prefix={prefix}\nexec_prefix=${{prefix}}\nlibdir=${{exec_prefix}}/lib\nincludedir=${{prefix}}/include\n\n\
         Version: {version}\nCflags: -I${{includedir}}\n",
        prefix = prefix.display()
    );
    write(
        &lib.join("pkgconfig/nvtxr.pc"),
        &format!(
            "{pc_head}Name: nvtxr\nDescription: NVTX annotations with NVIDIA's NVTX3 tool-loading protocol\n\
             Libs: -L${{libdir}} -Wl,-rpath,${{libdir}} -lnvtxr\nLibs.private: {static_libs}\n"
        ),
    );
    write(
        &lib.join("pkgconfig/nvtxr-static.pc"),
        &format!(
            "{pc_head}Name: nvtxr-static\nDescription: nvtxr, linked statically\n\
             Libs: ${{libdir}}/libnvtxr.a {static_libs}\n"
        ),
    );

    let cmake = lib.join("cmake/nvtxr");
    write(
        &cmake.join("nvtxrConfig.cmake"),
        &format!(
            r#"# nvtxr's CMake package: find_package(nvtxr) gives
#   nvtxr::shared  the shared library (SONAME {soname})
#   nvtxr::static  the static library, with its link dependencies
#   nvtxr::nvtxr   nvtxr::shared, or nvtxr::static when nvtxr_USE_STATIC_LIBS is ON
get_filename_component(_nvtxr_prefix "${{CMAKE_CURRENT_LIST_DIR}}/../../.." ABSOLUTE)
if(NOT TARGET nvtxr::shared)
  add_library(nvtxr::shared SHARED IMPORTED)
  set_target_properties(nvtxr::shared PROPERTIES
    IMPORTED_LOCATION "${{_nvtxr_prefix}}/lib/{real}"
    IMPORTED_SONAME "{soname}"
    INTERFACE_INCLUDE_DIRECTORIES "${{_nvtxr_prefix}}/include")
  add_library(nvtxr::static STATIC IMPORTED)
  set_target_properties(nvtxr::static PROPERTIES
    IMPORTED_LOCATION "${{_nvtxr_prefix}}/lib/libnvtxr.a"
    INTERFACE_INCLUDE_DIRECTORIES "${{_nvtxr_prefix}}/include"
    INTERFACE_LINK_LIBRARIES "{libs}")
  add_library(nvtxr::nvtxr INTERFACE IMPORTED)
  if(nvtxr_USE_STATIC_LIBS)
    set_target_properties(nvtxr::nvtxr PROPERTIES INTERFACE_LINK_LIBRARIES nvtxr::static)
  else()
    set_target_properties(nvtxr::nvtxr PROPERTIES INTERFACE_LINK_LIBRARIES nvtxr::shared)
  endif()
endif()
unset(_nvtxr_prefix)
"#,
            libs = cmake_libraries()
        ),
    );
    write(
        &cmake.join("nvtxrConfigVersion.cmake"),
        &format!(
            r#"# Compatible: the same major version, at least the version asked for.
set(PACKAGE_VERSION "{version}")
if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION OR NOT PACKAGE_FIND_VERSION_MAJOR STREQUAL "{major}")
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
else()
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
  if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
endif()
"#
        ),
    );
    base
}
