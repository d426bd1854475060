// Links Debian's libisal (libisal-dev, installed by vm/setup.sh).
fn main() {
    println!("cargo:rustc-link-lib=isal");
}
