//! Sets the linker flags a Node-API addon needs on each platform.
fn main() {
    napi_build::setup();
}
