//! The value of a position (win, loss or draw with its depth, for the
//! player to move) and its one- and two-byte encodings in solved layers:
//! plain data that reaches no other module, so the full checkers and the
//! claims may read values without the solver.

/// First byte of the win range: a win in d plies is `WIN_BASE + d`.
pub const WIN_BASE: u8 = 16;
/// First byte of the loss range: a loss in d plies is `LOSS_BASE + d`.
pub const LOSS_BASE: u8 = 136;
/// Largest depth the byte encoding holds: 119 plies.
pub const MAX_DEPTH: u8 = LOSS_BASE - WIN_BASE - 1;
/// First value of the win range of the two-byte encoding: a win in d plies
/// is `WIDE_WIN_BASE + d`.
pub const WIDE_WIN_BASE: u16 = 16;
/// First value of the loss range of the two-byte encoding: a loss in d
/// plies is `WIDE_LOSS_BASE + d`.
pub const WIDE_LOSS_BASE: u16 = 0x8000;
/// Largest depth the two-byte encoding holds: 32,751 plies.
pub const WIDE_MAX_DEPTH: u16 = WIDE_LOSS_BASE - WIDE_WIN_BASE - 1;

/// The value of a position for the player to move, and its encodings in
/// solved layers, one byte per position or, when some depth needs it, two
/// (a little-endian `u16`):
///
/// | byte | two bytes | value |
/// |---|---|---|
/// | 0 | 0 | draw |
/// | 16 + d (16 ..= 135) | 16 + d (16 ..= 32,767) | win for the player to move in d plies |
/// | 136 + d (136 ..= 255) | 32,768 + d (32,768 ..= 65,519) | loss for the player to move in d plies |
///
/// (Dodgem's layer shards use the one-byte encoding, so the engine's bytes
/// and Dodgem's own solver's can be compared directly.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Value {
    /// The player to move wins in this many plies.
    Win(u16),
    /// The player to move loses in this many plies.
    Loss(u16),
    /// Neither player can force a win.
    Draw,
}

impl Value {
    /// The byte of this value (table above).
    ///
    /// # Panics
    /// If the depth exceeds [`MAX_DEPTH`].
    pub fn to_byte(self) -> u8 {
        let byte = |base: u8, d: u16| {
            assert!(
                d <= u16::from(MAX_DEPTH),
                "depth {d} past the byte encoding"
            );
            base + d as u8
        };
        match self {
            Value::Draw => 0,
            Value::Win(d) => byte(WIN_BASE, d),
            Value::Loss(d) => byte(LOSS_BASE, d),
        }
    }

    /// Decodes a byte of a solved layer; `None` for the unused bytes 1 … 15.
    pub fn from_byte(b: u8) -> Option<Value> {
        match b {
            0 => Some(Value::Draw),
            1..WIN_BASE => None,
            WIN_BASE..LOSS_BASE => Some(Value::Win(u16::from(b - WIN_BASE))),
            _ => Some(Value::Loss(u16::from(b - LOSS_BASE))),
        }
    }

    /// The two-byte code of this value (table above).
    ///
    /// # Panics
    /// If the depth exceeds [`WIDE_MAX_DEPTH`].
    pub fn to_wide(self) -> u16 {
        match self {
            Value::Draw => 0,
            Value::Win(d) => {
                assert!(d <= WIDE_MAX_DEPTH, "depth {d} past the two-byte encoding");
                WIDE_WIN_BASE + d
            }
            Value::Loss(d) => {
                assert!(d <= WIDE_MAX_DEPTH, "depth {d} past the two-byte encoding");
                WIDE_LOSS_BASE + d
            }
        }
    }

    /// Decodes a two-byte code; `None` for the unused codes 1 … 15 and
    /// losses deeper than [`WIDE_MAX_DEPTH`] (wins and losses hold the same
    /// depths).
    pub fn from_wide(w: u16) -> Option<Value> {
        match w {
            0 => Some(Value::Draw),
            1..WIDE_WIN_BASE => None,
            WIDE_WIN_BASE..WIDE_LOSS_BASE => Some(Value::Win(w - WIDE_WIN_BASE)),
            _ if w - WIDE_LOSS_BASE <= WIDE_MAX_DEPTH => Some(Value::Loss(w - WIDE_LOSS_BASE)),
            _ => None,
        }
    }

    /// The value for the player who moved into a position of this value.
    pub fn for_mover(self) -> Value {
        match self {
            Value::Win(d) => Value::Loss(d + 1),
            Value::Loss(d) => Value::Win(d + 1),
            Value::Draw => Value::Draw,
        }
    }

    /// `win`, `loss` or `draw`.
    pub fn word(self) -> &'static str {
        match self {
            Value::Win(_) => "win",
            Value::Loss(_) => "loss",
            Value::Draw => "draw",
        }
    }

    /// The depth in plies (`None` for a draw).
    pub fn depth(self) -> Option<u16> {
        match self {
            Value::Win(d) | Value::Loss(d) => Some(d),
            Value::Draw => None,
        }
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Win(d) => write!(f, "win in {d}"),
            Value::Loss(d) => write!(f, "loss in {d}"),
            Value::Draw => write!(f, "draw"),
        }
    }
}

/// Whether the solved bytes `bytes` of a layer of `size` positions use the
/// two-byte encoding: `Some(false)` for one byte per position, `Some(true)`
/// for two, `None` for any other length.
pub fn is_wide(bytes: &[u8], size: u64) -> Option<bool> {
    let len = bytes.len() as u64;
    if len == size {
        Some(false)
    } else if len == 2 * size {
        Some(true)
    } else {
        None
    }
}

/// The value of rank `r` in the solved bytes of a layer (`wide`: two bytes
/// per position, else one; see [`Value`]); `None` for an unused code.
///
/// # Panics
/// If `r` is past the layer.
#[inline]
pub fn value_at(bytes: &[u8], wide: bool, r: u64) -> Option<Value> {
    if wide {
        let i = 2 * r as usize;
        Value::from_wide(u16::from_le_bytes([bytes[i], bytes[i + 1]]))
    } else {
        Value::from_byte(bytes[r as usize])
    }
}
