//! What the commands' unit tests share: a service over the bundled worlds
//! in a temporary data folder, and expert profiles.

use std::path::Path;

use understudy::store::ExpertInput;

use crate::service::Service;

/// A service on `dir` with the bundled worlds.
pub fn service(dir: &Path) -> Service {
    let worlds = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/worlds");
    Service::open(dir, Some(worlds)).expect("open the service")
}

/// Creates an expert profile (who becomes the one using the app); its id.
pub fn profile(s: &Service, name: &str) -> String {
    s.save_expert(
        None,
        ExpertInput {
            name: name.into(),
            ..ExpertInput::default()
        },
    )
    .expect("save the profile")
    .id
}
