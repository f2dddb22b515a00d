//! With the feature `node`, the linker flags a Node-API addon needs (napi-build).

fn main() {
    #[cfg(feature = "node")]
    napi_build::setup();
}
