//! What the window's WebKit is asked to keep in memory.
//!
//! The app is a local page of forms and tables: it never navigates, has no
//! animations or video, and is served from the binary. WebKitGTK's defaults
//! are a browser's: composited rendering through OpenGL (on a machine
//! without a GPU driver, Mesa's software rasteriser holds every layer's
//! buffers in the page process) and memory caches for revisiting pages.
//! Measured with tests-e2e/test_memory.py, compositing alone was about
//! 190 MB of a task's 570 MB. The settings below apply to every window,
//! the `--blank` baseline page included, so the memory test compares like
//! with like.
//!
//! What the task holds beyond a blank page after this (about 160 MB, 1.6×):
//! the app process keeps every bundled world parsed and seeded (+36 MB);
//! the page process touches more of WebKit's and JavaScriptCore's code
//! (+15 MB), shapes and caches text, which an empty page never does
//! (+17 MB of malloc heap), and holds the DOM, styles and JavaScript heap
//! (+50 MB), plus garbage between collections. Not reachable from here:
//! WebKit's memory-pressure settings are a construct-only property of the
//! web context, which wry creates, and the UI-process API has no call to
//! collect JavaScript garbage.

/// Whether the window renders through OpenGL: off unless the user asks for
/// it with `UNDERSTUDY_GPU=1` (for a machine where software painting is too
/// slow, or to compare).
pub fn gpu_wanted(var: Option<&std::ffi::OsStr>) -> bool {
    var.is_some_and(|v| v == "1")
}

/// Applies the memory settings to the window's webview.
#[cfg(target_os = "linux")]
pub fn trim(window: &tauri::WebviewWindow, gpu: bool) -> tauri::Result<()> {
    window.with_webview(move |webview| {
        use webkit2gtk::{
            CacheModel, HardwareAccelerationPolicy, SettingsExt, WebContextExt, WebViewExt,
        };
        let view = webview.inner();
        if let Some(settings) = WebViewExt::settings(&view) {
            if !gpu {
                settings.set_hardware_acceleration_policy(HardwareAccelerationPolicy::Never);
            }
            // No back/forward page cache: the app never navigates away.
            settings.set_enable_page_cache(false);
        }
        if let Some(context) = view.context() {
            // No memory cache of resources: they come from the binary.
            context.set_cache_model(CacheModel::DocumentViewer);
        }
    })
}

/// Other platforms' webviews keep their defaults.
#[cfg(not(target_os = "linux"))]
pub fn trim(_window: &tauri::WebviewWindow, _gpu: bool) -> tauri::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::gpu_wanted;
    use std::ffi::OsStr;

    #[test]
    fn the_gpu_is_used_only_when_asked_for() {
        assert!(!gpu_wanted(None));
        assert!(!gpu_wanted(Some(OsStr::new("0"))));
        assert!(!gpu_wanted(Some(OsStr::new(""))));
        assert!(gpu_wanted(Some(OsStr::new("1"))));
    }
}
