// Empty: this package only names redis-cell for `cargo fetch`.
