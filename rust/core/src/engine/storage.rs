//! Storage an engine's capacities come from. An engine never allocates: its
//! caller hands it the arrays it works in, fixed arrays (the `Inline`
//! storages, sized at compile time) or allocations the caller sized at run
//! time (the kernel's, from the flow's bandwidth-delay product). The engine
//! reads each array's length where a capacity was a constant.

/// Slots of `T`: an array, a boxed slice, a vector, or the caller's own
/// allocation type.
pub trait Slots<T>: AsRef<[T]> + AsMut<[T]> {}

impl<T, X: AsRef<[T]> + AsMut<[T]> + ?Sized> Slots<T> for X {}
