//! Finding tool-like names mentioned in text.
