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
//! JavaScriptCore's JIT compilers are off too ([`Engines::environment`]).
//!
//! What the task still holds beyond a blank page (2 Dec and 3 Dec runs):
//! the app process about 20 MB, now that it keeps only the worlds in use
//! (world_shelf.rs; it kept every bundled world, +30 MB, before); the page
//! process about 100 MB: more of WebKit's and JavaScriptCore's code
//! (+10 MB), text shaping and caches, which an empty page never does
//! (+20 MB of malloc heap), and +50 MB in anonymous maps, one malloc arena
//! of a WebKit thread growing from 12 to 37 MB. The page's DOM stays under
//! 450 elements. Tried on 3 Dec, each in a full memory test, and none moved
//! the figure beyond the run-to-run spread of about 10 MB: a smaller heap
//! for JavaScriptCore (`JSC_forceRAMSize` of 16, 64 or 128 MB,
//! `JSC_gcMaxHeapSize` of 16 MB), so garbage is not what holds it; painting
//! on the main thread (`WEBKIT_SKIA_CPU_PAINTING_THREADS=0`); no async
//! scrolling layers (`WEBKIT_DISABLE_ASYNC_SCROLLING=1`); fewer malloc
//! arenas or a fixed mmap threshold (`MALLOC_ARENA_MAX=2`,
//! `MALLOC_MMAP_THRESHOLD_`). The system allocator in place of WebKit's
//! (`Malloc=1`) added 35 MB. Not reachable from here: WebKit's
//! memory-pressure settings are a construct-only property of the web
//! context, which wry creates, and the UI-process API has no call to
//! collect JavaScript garbage.

/// Which of WebKit's memory-hungry engines the user turned back on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Engines {
    /// Paint through OpenGL (`UNDERSTUDY_GPU=1`): for a machine where CPU
    /// painting is too slow, or to compare.
    pub gpu: bool,
    /// Compile JavaScript to machine code (`UNDERSTUDY_JIT=1`).
    pub jit: bool,
}

impl Engines {
    /// Reads `UNDERSTUDY_GPU` and `UNDERSTUDY_JIT` through `var`: each is on
    /// only when set to `1`.
    pub fn from_env(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Engines {
        let on = |name: &str| var(name).is_some_and(|v| v == "1");
        Engines {
            gpu: on("UNDERSTUDY_GPU"),
            jit: on("UNDERSTUDY_JIT"),
        }
    }

    /// The environment the page process needs for these choices: painting
    /// on the CPU unless the GPU is wanted, and JavaScriptCore without its
    /// JIT compilers unless they are. A variable the user already set is
    /// left as it is.
    ///
    /// Why no JIT: the page is forms and tables whose scripts run in short
    /// bursts on a key press, so interpreting them is fast enough, while
    /// the JITs' compilers, code and profiling data cost the page process
    /// about 75 MB in a task (tests-e2e/test_memory.py: the task's peak
    /// fell from 1.64 to 1.42 times a blank page; the optimising compilers
    /// alone were 30 MB of it). WebKit supports running without them
    /// (Apple's Lockdown Mode does).
    pub fn environment(self) -> Vec<(&'static str, &'static str)> {
        let mut vars = Vec::new();
        if !self.gpu {
            vars.push(("WEBKIT_SKIA_ENABLE_CPU_RENDERING", "1"));
        }
        if !self.jit {
            vars.push(("JSC_useJIT", "false"));
        }
        vars
    }
}

/// Sets the environment for `engines` ([`Engines::environment`]). WebKit
/// reads it when it starts its page process, which inherits this process's
/// environment: call this first thing, before any thread or window exists.
pub fn prepare_environment(engines: Engines) {
    for (name, value) in engines.environment() {
        if std::env::var_os(name).is_none() {
            std::env::set_var(name, value);
        }
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
    use super::Engines;
    use std::ffi::OsString;

    fn engines(vars: &[(&str, &str)]) -> Engines {
        Engines::from_env(|name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| OsString::from(v))
        })
    }

    #[test]
    fn the_gpu_and_the_jit_are_used_only_when_asked_for() {
        assert_eq!(engines(&[]), Engines::default());
        assert_eq!(
            engines(&[("UNDERSTUDY_GPU", "0"), ("UNDERSTUDY_JIT", "")]),
            Engines::default()
        );
        assert_eq!(
            engines(&[("UNDERSTUDY_GPU", "1"), ("UNDERSTUDY_JIT", "1")]),
            Engines {
                gpu: true,
                jit: true
            }
        );
    }

    #[test]
    fn the_page_paints_on_the_cpu_and_interprets_javascript_by_default() {
        assert_eq!(
            Engines::default().environment(),
            [
                ("WEBKIT_SKIA_ENABLE_CPU_RENDERING", "1"),
                ("JSC_useJIT", "false")
            ]
        );
        assert_eq!(
            Engines {
                gpu: true,
                jit: true
            }
            .environment(),
            []
        );
    }
}
