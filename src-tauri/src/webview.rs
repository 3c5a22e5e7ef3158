//! What the window's WebKit is asked to keep in memory.
//!
//! The app is a local page of forms and tables: it never navigates, has no
//! animations or video, and is served from the binary. WebKitGTK's defaults
//! are a browser's: Skia paints every layer's tiles through OpenGL (on a
//! machine without a GPU driver, Mesa's software rasteriser holds those
//! buffers, and its own, in the page process) and memory caches keep pages
//! for revisiting. Measured with tests-e2e/test_memory.py, painting on the
//! CPU instead saved about 75 MB of a task's 570 MB. The settings apply to
//! every window, the `--blank` baseline page included, so the memory test
//! compares like with like.
//!
//! Turning compositing off altogether (hardware-acceleration policy
//! "never") saved 190 MB, but then the page sometimes stopped drawing under
//! Xvfb until the X window was exposed again (the e2e suite hung waiting
//! for an animation frame), so it is not done.
//!
//! What the task still holds beyond a blank page: the app process keeps
//! every bundled world parsed and seeded (+36 MB); the page process touches
//! more of WebKit's and JavaScriptCore's code (+15 MB), shapes and caches
//! text, which an empty page never does (+17 MB of malloc heap), holds the
//! DOM, styles and JavaScript heap (+50 MB) and garbage between
//! collections, and the compositor's layers. Not reachable from here:
//! WebKit's memory-pressure settings are a construct-only property of the
//! web context, which wry creates, and the UI-process API has no call to
//! collect JavaScript garbage.

/// Whether WebKit paints through OpenGL: not unless the user asks for it
/// with `UNDERSTUDY_GPU=1` (for a machine where CPU painting is too slow,
/// or to compare).
pub fn gpu_wanted(var: Option<&std::ffi::OsStr>) -> bool {
    var.is_some_and(|v| v == "1")
}

/// Asks WebKit to paint on the CPU, unless `gpu` or the user already chose
/// (`WEBKIT_SKIA_ENABLE_CPU_RENDERING` set). WebKit reads it when it starts
/// its page process, which inherits this process's environment: call this
/// first thing, before any thread or window exists.
pub fn prepare_environment(gpu: bool) {
    const VAR: &str = "WEBKIT_SKIA_ENABLE_CPU_RENDERING";
    if !gpu && std::env::var_os(VAR).is_none() {
        std::env::set_var(VAR, "1");
    }
}

/// Applies the memory settings to the window's webview.
#[cfg(target_os = "linux")]
pub fn trim(window: &tauri::WebviewWindow) -> tauri::Result<()> {
    window.with_webview(move |webview| {
        use webkit2gtk::{CacheModel, SettingsExt, WebContextExt, WebViewExt};
        let view = webview.inner();
        if let Some(settings) = WebViewExt::settings(&view) {
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
pub fn trim(_window: &tauri::WebviewWindow) -> tauri::Result<()> {
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
