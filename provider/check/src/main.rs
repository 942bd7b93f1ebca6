//! `mlkem-provider-check`: whether post-quantum TLS is in effect.
fn main() {
    println!("mlkem-provider-check: work in progress");
}
