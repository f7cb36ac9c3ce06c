//! A minimal JSON value and writer (the suite has no serde dependency).

use std::fmt::Write;

#[derive(Clone, Debug)]
pub enum Json {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<Json>),
    /// Keys keep their insertion order, so files diff well run to run.
    Object(Vec<(String, Json)>),
}

impl Json {
    pub fn object<'a>(fields: impl IntoIterator<Item = (&'a str, Json)>) -> Json {
        Json::Object(fields.into_iter().map(|(key, value)| (key.to_string(), value)).collect())
    }

    /// Pretty-printed with two-space indentation.
    pub fn render(&self) -> String {
        let mut text = String::new();
        self.write(&mut text, 0);
        text.push('\n');
        text
    }

    fn write(&self, text: &mut String, depth: usize) {
        match self {
            Json::Null => text.push_str("null"),
            Json::Bool(value) => text.push_str(if *value { "true" } else { "false" }),
            // JSON has no NaN or infinity.
            Json::Number(value) if !value.is_finite() => text.push_str("null"),
            Json::Number(value) => {
                let _ = write!(text, "{value}");
            }
            Json::String(value) => write_string(text, value),
            Json::Array(items) if items.is_empty() => text.push_str("[]"),
            Json::Array(items) => {
                // Arrays of numbers (samples) stay on one line.
                if items.iter().all(|item| matches!(item, Json::Number(_) | Json::Null)) {
                    text.push('[');
                    for (position, item) in items.iter().enumerate() {
                        if position > 0 {
                            text.push_str(", ");
                        }
                        item.write(text, depth);
                    }
                    text.push(']');
                    return;
                }
                text.push_str("[\n");
                for (position, item) in items.iter().enumerate() {
                    indent(text, depth + 1);
                    item.write(text, depth + 1);
                    text.push_str(if position + 1 < items.len() { ",\n" } else { "\n" });
                }
                indent(text, depth);
                text.push(']');
            }
            Json::Object(fields) if fields.is_empty() => text.push_str("{}"),
            Json::Object(fields) => {
                text.push_str("{\n");
                for (position, (key, value)) in fields.iter().enumerate() {
                    indent(text, depth + 1);
                    write_string(text, key);
                    text.push_str(": ");
                    value.write(text, depth + 1);
                    text.push_str(if position + 1 < fields.len() { ",\n" } else { "\n" });
                }
                indent(text, depth);
                text.push('}');
            }
        }
    }
}

fn indent(text: &mut String, depth: usize) {
    for _ in 0..depth {
        text.push_str("  ");
    }
}

fn write_string(text: &mut String, value: &str) {
    text.push('"');
    for character in value.chars() {
        match character {
            '"' => text.push_str("\\\""),
            '\\' => text.push_str("\\\\"),
            '\n' => text.push_str("\\n"),
            '\r' => text.push_str("\\r"),
            '\t' => text.push_str("\\t"),
            control if (control as u32) < 0x20 => {
                let _ = write!(text, "\\u{:04x}", control as u32);
            }
            other => text.push(other),
        }
    }
    text.push('"');
}

impl From<f64> for Json {
    fn from(value: f64) -> Json {
        Json::Number(value)
    }
}

impl From<bool> for Json {
    fn from(value: bool) -> Json {
        Json::Bool(value)
    }
}

impl From<&str> for Json {
    fn from(value: &str) -> Json {
        Json::String(value.to_string())
    }
}

impl From<String> for Json {
    fn from(value: String) -> Json {
        Json::String(value)
    }
}

impl<T: Into<Json>> From<Option<T>> for Json {
    fn from(value: Option<T>) -> Json {
        value.map_or(Json::Null, Into::into)
    }
}
