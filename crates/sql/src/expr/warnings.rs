//! Conditions raised while evaluating expressions (CAST truncation, division by zero,
//! strings that are not numbers): a per-thread list that evaluation appends to ([`warn`]) and
//! the session drains after each statement ([`take_warnings`]).
//!
//! Invariants: the list never holds more than [`MAX_EVAL_WARNINGS`] conditions (MariaDB's
//! max_error_count); a condition's level is "Note" or "Warning".
//!
//! Called by every evaluation module of `expr`, by `dml` (row renumbering) and by the session.

thread_local! {
    /// Conditions raised while evaluating expressions (CAST truncation, division by zero,
    /// ...), collected per thread: the session takes them after each statement
    /// ([`take_warnings`]). Bounded by [`MAX_EVAL_WARNINGS`] (MariaDB's max_error_count).
    static EVAL_WARNINGS: std::cell::RefCell<Vec<(String, u16, String)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// MariaDB's default `max_error_count`: conditions kept per statement.
pub(crate) const MAX_EVAL_WARNINGS: usize = 64;

/// Raises a condition (`level`: "Note" / "Warning") during evaluation.
pub(crate) fn warn(level: &str, code: u16, msg: String) {
    debug_assert!(
        level == "Note" || level == "Warning",
        "condition level {level}"
    );
    EVAL_WARNINGS.with(|w| {
        let mut w = w.borrow_mut();
        if w.len() < MAX_EVAL_WARNINGS {
            w.push((level.to_string(), code, msg));
        }
        debug_assert!(w.len() <= MAX_EVAL_WARNINGS);
    });
}

/// How many conditions this thread holds (a mark for [`renumber_row_warnings`]).
pub(crate) fn warning_count() -> usize {
    EVAL_WARNINGS.with(|w| w.borrow().len())
}

/// Whether a condition raised since `from` ([`warning_count`]) has one of `codes`.
pub(crate) fn has_code_since(from: usize, codes: &[u16]) -> bool {
    EVAL_WARNINGS.with(|w| w.borrow().iter().skip(from).any(|c| codes.contains(&c.1)))
}

/// Conditions raised since `from` ([`warning_count`]) that name row 1 name `row` instead
/// (the DML row loop knows the row number; the conversions do not).
pub(crate) fn renumber_row_warnings(from: usize, row: u64) {
    EVAL_WARNINGS.with(|w| {
        for c in w.borrow_mut().iter_mut().skip(from) {
            c.2 = crate::error::with_row(&c.2, row);
        }
    });
}

/// Whether a condition with `code` was raised on this thread since the last take.
pub(crate) fn has_warning(code: u16) -> bool {
    EVAL_WARNINGS.with(|w| w.borrow().iter().any(|c| c.1 == code))
}

/// Takes the conditions raised on this thread since the last call.
pub(crate) fn take_warnings() -> Vec<(String, u16, String)> {
    EVAL_WARNINGS.with(|w| std::mem::take(&mut *w.borrow_mut()))
}
