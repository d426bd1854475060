// SPDX-License-Identifier: GPL-2.0
//! Module-wide values that callbacks reach without an argument (the
//! netfilter hook, the engines): a [`Global`] static, filled by the value's
//! owner, a [`Published`] field of the module struct. The field is made
//! before the registrations whose callbacks read it and dropped after them
//! (the module's field order), so a callback never sees a freed value.

use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::prelude::*;

/// A static slot for one module-wide `T` (empty until published).
pub(crate) struct Global<T>(AtomicPtr<T>);

impl<T> Global<T> {
    pub(crate) const fn new() -> Self {
        Global(AtomicPtr::new(core::ptr::null_mut()))
    }

    /// Boxes `value` (so it stays put however its owner moves) and makes it
    /// this slot's until the returned owner drops.
    pub(crate) fn publish(&'static self, value: T) -> Result<Published<T>> {
        let value = KBox::new(value, GFP_KERNEL)?;
        self.0
            .store(core::ptr::from_ref(&*value).cast_mut(), Ordering::Release);
        Ok(Published {
            slot: self,
            _value: value,
        })
    }
}

impl<T: Sync> Global<T> {
    /// The published value (None before it is published, or after).
    pub(crate) fn get(&self) -> Option<&T> {
        // SAFETY: a non-null value points into the `Published` that owns it,
        // which the module holds until every callback that reads this slot
        // is unregistered and has returned (module docs above); `T: Sync`,
        // so sharing it between CPUs is fine.
        unsafe { self.0.load(Ordering::Acquire).as_ref() }
    }
}

/// Owns a [`Global`]'s value; dropping it empties the slot, then frees it.
pub(crate) struct Published<T: 'static> {
    slot: &'static Global<T>,
    _value: KBox<T>,
}

impl<T> Drop for Published<T> {
    fn drop(&mut self) {
        // The callbacks that read the slot are gone (field order).
        self.slot.0.store(core::ptr::null_mut(), Ordering::Release);
    }
}
