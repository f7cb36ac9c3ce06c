//! Size inference stub (being written).
