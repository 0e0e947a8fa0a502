//! The replica's client connection to its primary (built by the IO thread's issue work).
