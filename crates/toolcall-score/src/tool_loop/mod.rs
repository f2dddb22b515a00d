//! The loop guard: a sans-IO agent loop that survives unknown tool names.
