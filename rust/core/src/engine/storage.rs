//! Storage an engine's capacities come from. An engine never allocates: its
//! caller hands it the arrays it works in, fixed arrays (the `Inline`
//! storages, sized at compile time) or allocations the caller sized at run
//! time (the kernel's, from the flow's bandwidth-delay product). The engine
//! reads each array's length where a capacity was a constant.

/// Slots of `T`: an array, a boxed slice, a vector, or the caller's own
/// allocation type.
pub trait Slots<T>: AsRef<[T]> + AsMut<[T]> {}

impl<T, X: AsRef<[T]> + AsMut<[T]> + ?Sized> Slots<T> for X {}

/// Vectors: engine storage whose lengths the caller chooses at run time, as
/// the module's are (the host's tests, fuzzing and the simulator, with the
/// `alloc` feature; never in the module).
#[cfg(any(test, feature = "alloc"))]
#[derive(Debug)]
pub struct Vecs;

#[cfg(any(test, feature = "alloc"))]
impl super::csf::CsfStorage for Vecs {
    type Ring = alloc::vec::Vec<super::csf::Block>;
    type Acc = alloc::vec::Vec<u8>;
}

#[cfg(any(test, feature = "alloc"))]
impl super::crf::CrfStorage for Vecs {
    type Blocks = alloc::vec::Vec<super::crf::Block>;
    type Flags = alloc::vec::Vec<u16>;
    type Due = alloc::vec::Vec<u32>;
    type Hold = alloc::vec::Vec<super::crf::HoldEntry>;
    type Repairs = alloc::vec::Vec<super::crf::RepairMeta>;
}
