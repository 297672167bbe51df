//! The page's JavaScript objects read into Rust values: [`from_value`] reads a value exactly as
//! serde-wasm-bindgen 0.6's `from_value` does (the same JavaScript values accepted, read the
//! same way, and the same error text), but its errors are this crate's [`Error`], which writes
//! serde's "invalid type" and "invalid value" messages itself. serde's own display of an
//! unexpected value writes a float with the standard library (`floating point `1.5``), and
//! that one display kept std's whole float formatting (Grisu, Dragon: about 9 KB gzipped) in
//! each wasm module; here a float is written by [`ratelab::decimal::shortest`], to the same
//! text.

use js_sys::{Array, ArrayBuffer, JsString, Number, Object, Uint8Array};
use serde::de::value::{MapDeserializer, SeqDeserializer};
use serde::de::{self, DeserializeOwned, IntoDeserializer, Unexpected};
use std::fmt;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};

#[wasm_bindgen]
extern "C" {
    /// JavaScript's `String(value)`.
    #[wasm_bindgen(js_name = String)]
    fn js_string(value: &JsValue) -> String;
}

/// A value that could not be read, with its message as serde-wasm-bindgen's error shows it (a
/// JavaScript `Error`, as `String(error)` writes it: `Error: invalid type: …`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(String);

impl Error {
    fn new(message: &str) -> Error {
        // `Error.prototype.toString`: the name alone when the message is empty.
        if message.is_empty() {
            Error("Error".into())
        } else {
            Error(format!("Error: {message}"))
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl From<JsValue> for Error {
    /// A JavaScript exception, as `String(exception)` writes it.
    fn from(e: JsValue) -> Error {
        Error(js_string(&e))
    }
}

impl de::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Error {
        Error::new(&msg.to_string())
    }

    fn invalid_type(unexp: Unexpected<'_>, exp: &dyn de::Expected) -> Error {
        Error::new(&format!(
            "invalid type: {}, expected {exp}",
            unexpected(unexp)
        ))
    }

    fn invalid_value(unexp: Unexpected<'_>, exp: &dyn de::Expected) -> Error {
        Error::new(&format!(
            "invalid value: {}, expected {exp}",
            unexpected(unexp)
        ))
    }
}

/// `unexp` as serde's `Display` writes it, a float by [`ratelab::decimal::shortest`] (with
/// `.0` after a whole number, as serde adds it).
pub fn unexpected(unexp: Unexpected<'_>) -> String {
    match unexp {
        Unexpected::Bool(b) => format!("boolean `{b}`"),
        Unexpected::Unsigned(i) => format!("integer `{i}`"),
        Unexpected::Signed(i) => format!("integer `{i}`"),
        Unexpected::Float(f) => {
            let mut text = ratelab::decimal::shortest(f);
            if f.is_finite() && !text.contains('.') {
                text.push_str(".0");
            }
            format!("floating point `{text}`")
        }
        Unexpected::Char(c) => format!("character `{c}`"),
        Unexpected::Str(s) => format!("string {s:?}"),
        Unexpected::Bytes(_) => "byte array".into(),
        Unexpected::Unit => "unit value".into(),
        Unexpected::Option => "Option value".into(),
        Unexpected::NewtypeStruct => "newtype struct".into(),
        Unexpected::Seq => "sequence".into(),
        Unexpected::Map => "map".into(),
        Unexpected::Enum => "enum".into(),
        Unexpected::UnitVariant => "unit variant".into(),
        Unexpected::NewtypeVariant => "newtype variant".into(),
        Unexpected::TupleVariant => "tuple variant".into(),
        Unexpected::StructVariant => "struct variant".into(),
        Unexpected::Other(other) => other.into(),
    }
}

/// `T` read from `value`, as `serde_wasm_bindgen::from_value` reads it.
pub fn from_value<T: DeserializeOwned>(value: JsValue) -> Result<T> {
    T::deserialize(Deserializer { value })
}

type Result<T> = std::result::Result<T, Error>;

/// A JavaScript value being read: serde-wasm-bindgen 0.6's `Deserializer`, method for method
/// (without its `preserve` values, which the page does not use).
#[derive(Debug)]
struct Deserializer {
    value: JsValue,
}

impl From<JsValue> for Deserializer {
    fn from(value: JsValue) -> Deserializer {
        Deserializer { value }
    }
}

impl<'de> IntoDeserializer<'de, Error> for Deserializer {
    type Deserializer = Deserializer;

    fn into_deserializer(self) -> Deserializer {
        self
    }
}

/// A JavaScript `[key, value]` pair.
fn convert_pair(pair: JsValue) -> (Deserializer, Deserializer) {
    let pair = pair.unchecked_into::<Array>();
    (pair.get(0).into(), pair.get(1).into())
}

/// The items of an iterable.
struct SeqAccess {
    iter: js_sys::IntoIter,
}

impl<'de> de::SeqAccess<'de> for SeqAccess {
    type Error = Error;

    fn next_element_seed<T: de::DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>> {
        Ok(match self.iter.next().transpose()? {
            Some(value) => Some(seed.deserialize(Deserializer::from(value))?),
            None => None,
        })
    }
}

/// The `[key, value]` pairs of an iterable (a `Map`).
struct MapAccess {
    iter: js_sys::IntoIter,
    next_value: Option<Deserializer>,
}

impl<'de> de::MapAccess<'de> for MapAccess {
    type Error = Error;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        Ok(match self.iter.next().transpose()? {
            Some(pair) => {
                let (key, value) = convert_pair(pair);
                self.next_value = Some(value);
                Some(seed.deserialize(key)?)
            }
            None => None,
        })
    }

    fn next_value_seed<V: de::DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        let value = self
            .next_value
            .take()
            .ok_or_else(|| <Error as de::Error>::custom("a value asked for before its key"))?;
        seed.deserialize(value)
    }
}

/// A struct's fields, read from an object by name: a field the object does not have is missing
/// (one it has as `undefined` is not).
struct ObjectAccess {
    obj: JsValue,
    fields: std::slice::Iter<'static, &'static str>,
    next_value: Option<Deserializer>,
}

impl<'de> de::MapAccess<'de> for ObjectAccess {
    type Error = Error;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        for field in &mut self.fields {
            let key = JsValue::from_str(field);
            let value = js_sys::Reflect::get(&self.obj, &key)?;
            let missing = value.is_undefined() && !key.js_in(&self.obj);
            if !missing {
                self.next_value = Some(Deserializer::from(value));
                let name: de::value::StrDeserializer<'_, Error> = (*field).into_deserializer();
                return Ok(Some(seed.deserialize(name)?));
            }
        }
        Ok(None)
    }

    fn next_value_seed<V: de::DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        let value = self
            .next_value
            .take()
            .ok_or_else(|| <Error as de::Error>::custom("a value asked for before its key"))?;
        seed.deserialize(value)
    }
}

/// An enum's variant: its name and what it holds.
struct EnumAccess {
    tag: Deserializer,
    payload: Deserializer,
}

impl<'de> de::EnumAccess<'de> for EnumAccess {
    type Error = Error;
    type Variant = Deserializer;

    fn variant_seed<V: de::DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Deserializer)> {
        Ok((seed.deserialize(self.tag)?, self.payload))
    }
}

impl Deserializer {
    fn as_object_entries(&self) -> Option<Array> {
        if self.value.is_object() {
            Some(Object::entries(self.value.unchecked_ref()))
        } else {
            None
        }
    }

    fn is_nullish(&self) -> bool {
        self.value.loose_eq(&JsValue::NULL)
    }

    fn as_bytes(&self) -> Option<Vec<u8>> {
        if let Some(v) = self.value.dyn_ref::<Uint8Array>() {
            Some(v.to_vec())
        } else {
            self.value
                .dyn_ref::<ArrayBuffer>()
                .map(|v| Uint8Array::new(v).to_vec())
        }
    }

    #[cold]
    fn invalid_type_(&self, visitor: &dyn de::Expected) -> Error {
        let string;
        let bytes;
        let unexpected = if self.is_nullish() {
            Unexpected::Unit
        } else if let Some(v) = self.value.as_bool() {
            Unexpected::Bool(v)
        } else if let Some(v) = self.value.as_f64() {
            Unexpected::Float(v)
        } else if let Some(v) = self.value.as_string() {
            string = v;
            Unexpected::Str(&string)
        } else if let Some(v) = self.as_bytes() {
            bytes = v;
            Unexpected::Bytes(&bytes)
        } else {
            string = format!("{:?}", self.value);
            Unexpected::Other(&string)
        };
        de::Error::invalid_type(unexpected, visitor)
    }

    fn invalid_type<'de, V: de::Visitor<'de>>(&self, visitor: V) -> Result<V::Value> {
        Err(self.invalid_type_(&visitor))
    }

    fn as_safe_integer(&self) -> Option<i64> {
        if Number::is_safe_integer(&self.value) {
            return Some(self.value.unchecked_into_f64() as i64);
        }
        None
    }

    fn deserialize_from_js_number_signed<'de, V: de::Visitor<'de>>(
        &self,
        visitor: V,
    ) -> Result<V::Value> {
        match self.as_safe_integer() {
            Some(v) => visitor.visit_i64(v),
            _ => self.invalid_type(visitor),
        }
    }

    fn deserialize_from_js_number_unsigned<'de, V: de::Visitor<'de>>(
        &self,
        visitor: V,
    ) -> Result<V::Value> {
        match self.as_safe_integer() {
            Some(v) if v >= 0 => visitor.visit_u64(v as u64),
            _ => self.invalid_type(visitor),
        }
    }

    fn deserialize_from_array<'de, V: de::Visitor<'de>>(
        &self,
        visitor: V,
        array: &Array,
    ) -> Result<V::Value> {
        visitor.visit_seq(SeqDeserializer::new(array.iter().map(Deserializer::from)))
    }
}

impl<'de> de::Deserializer<'de> for Deserializer {
    type Error = Error;

    fn deserialize_any<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if self.is_nullish() {
            visitor.visit_unit()
        } else if let Some(v) = self.value.as_bool() {
            visitor.visit_bool(v)
        } else if self.value.is_bigint() {
            match i64::try_from(self.value) {
                Ok(v) => visitor.visit_i64(v),
                Err(value) => match u64::try_from(value) {
                    Ok(v) => visitor.visit_u64(v),
                    Err(_) => Err(de::Error::custom(
                        "Couldn't deserialize i64 or u64 from a BigInt outside i64::MIN..u64::MAX bounds",
                    )),
                },
            }
        } else if let Some(v) = self.value.as_f64() {
            if Number::is_safe_integer(&self.value) {
                visitor.visit_i64(v as i64)
            } else {
                visitor.visit_f64(v)
            }
        } else if let Some(v) = self.value.as_string() {
            visitor.visit_string(v)
        } else if Array::is_array(&self.value) {
            self.deserialize_seq(visitor)
        } else if let Some(bytes) = self.as_bytes() {
            visitor.visit_byte_buf(bytes)
        } else if self.value.is_object()
            && (!js_sys::Symbol::iterator().js_in(&self.value)
                || self.value.has_type::<js_sys::Map>())
        {
            self.deserialize_map(visitor)
        } else {
            self.invalid_type(visitor)
        }
    }

    fn deserialize_unit<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if self.is_nullish() {
            visitor.visit_unit()
        } else {
            self.invalid_type(visitor)
        }
    }

    fn deserialize_unit_struct<V: de::Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_bool<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if let Some(v) = self.value.as_bool() {
            visitor.visit_bool(v)
        } else {
            self.invalid_type(visitor)
        }
    }

    fn deserialize_f32<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_f64(visitor)
    }

    fn deserialize_f64<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if let Some(v) = self.value.as_f64() {
            visitor.visit_f64(v)
        } else {
            self.invalid_type(visitor)
        }
    }

    fn deserialize_identifier<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_string(visitor)
    }

    fn deserialize_str<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_string(visitor)
    }

    fn deserialize_string<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if let Some(v) = self.value.as_string() {
            visitor.visit_string(v)
        } else {
            self.invalid_type(visitor)
        }
    }

    fn deserialize_i8<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_from_js_number_signed(visitor)
    }

    fn deserialize_i16<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_from_js_number_signed(visitor)
    }

    fn deserialize_i32<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_from_js_number_signed(visitor)
    }

    fn deserialize_u8<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_from_js_number_unsigned(visitor)
    }

    fn deserialize_u16<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_from_js_number_unsigned(visitor)
    }

    fn deserialize_u32<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_from_js_number_unsigned(visitor)
    }

    fn deserialize_i64<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if self.value.is_bigint() {
            match i64::try_from(self.value) {
                Ok(v) => visitor.visit_i64(v),
                Err(_) => Err(de::Error::custom(
                    "Couldn't deserialize i64 from a BigInt outside i64::MIN..i64::MAX bounds",
                )),
            }
        } else {
            self.deserialize_from_js_number_signed(visitor)
        }
    }

    fn deserialize_u64<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if self.value.is_bigint() {
            match u64::try_from(self.value) {
                Ok(v) => visitor.visit_u64(v),
                Err(_) => Err(de::Error::custom(
                    "Couldn't deserialize u64 from a BigInt outside u64::MIN..u64::MAX bounds",
                )),
            }
        } else {
            self.deserialize_from_js_number_unsigned(visitor)
        }
    }

    fn deserialize_i128<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if self.value.is_bigint() {
            match i128::try_from(self.value) {
                Ok(v) => visitor.visit_i128(v),
                Err(_) => Err(de::Error::custom(
                    "Couldn't deserialize i128 from a BigInt outside i128::MIN..i128::MAX bounds",
                )),
            }
        } else {
            self.invalid_type(visitor)
        }
    }

    fn deserialize_u128<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if self.value.is_bigint() {
            match u128::try_from(self.value) {
                Ok(v) => visitor.visit_u128(v),
                Err(_) => Err(de::Error::custom(
                    "Couldn't deserialize u128 from a BigInt outside u128::MIN..u128::MAX bounds",
                )),
            }
        } else {
            self.invalid_type(visitor)
        }
    }

    fn deserialize_char<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if let Some(s) = self.value.dyn_ref::<JsString>() {
            if let Some(c) = s.as_char() {
                return visitor.visit_char(c);
            }
        }
        self.invalid_type(visitor)
    }

    fn deserialize_option<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if !self.is_nullish() {
            visitor.visit_some(self)
        } else {
            visitor.visit_none()
        }
    }

    fn deserialize_newtype_struct<V: de::Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if let Some(arr) = self.value.dyn_ref::<Array>() {
            self.deserialize_from_array(visitor, arr)
        } else if let Some(iter) = js_sys::try_iter(&self.value)? {
            visitor.visit_seq(SeqAccess { iter })
        } else {
            self.invalid_type(visitor)
        }
    }

    fn deserialize_tuple<V: de::Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: de::Visitor<'de>>(
        self,
        _name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value> {
        self.deserialize_tuple(len, visitor)
    }

    fn deserialize_map<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match js_sys::try_iter(&self.value)? {
            Some(iter) => visitor.visit_map(MapAccess {
                iter,
                next_value: None,
            }),
            None => match self.as_object_entries() {
                Some(arr) => visitor.visit_map(MapDeserializer::new(arr.iter().map(convert_pair))),
                None => self.invalid_type(visitor),
            },
        }
    }

    fn deserialize_struct<V: de::Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        if !self.value.is_object() {
            return self.invalid_type(visitor);
        }
        visitor.visit_map(ObjectAccess {
            obj: self.value,
            fields: fields.iter(),
            next_value: None,
        })
    }

    fn deserialize_enum<V: de::Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        let access = if self.value.is_string() {
            EnumAccess {
                tag: self.value.into(),
                payload: JsValue::UNDEFINED.into(),
            }
        } else if let Some(entries) = self.as_object_entries() {
            if entries.length() != 1 {
                return Err(de::Error::invalid_length(entries.length() as usize, &"1"));
            }
            let (tag, payload) = convert_pair(entries.get(0));
            EnumAccess { tag, payload }
        } else {
            return self.invalid_type(visitor);
        };
        visitor.visit_enum(access)
    }

    fn deserialize_ignored_any<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_unit()
    }

    fn deserialize_bytes<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_byte_buf(visitor)
    }

    fn deserialize_byte_buf<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if let Some(bytes) = self.as_bytes() {
            visitor.visit_byte_buf(bytes)
        } else if let Some(arr) = self.value.dyn_ref::<Array>() {
            self.deserialize_from_array(visitor, arr)
        } else {
            self.invalid_type(visitor)
        }
    }

    fn is_human_readable(&self) -> bool {
        true
    }
}

impl<'de> de::VariantAccess<'de> for Deserializer {
    type Error = Error;

    fn unit_variant(self) -> Result<()> {
        de::Deserialize::deserialize(self)
    }

    fn newtype_variant_seed<T: de::DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: de::Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value> {
        de::Deserializer::deserialize_tuple(self, len, visitor)
    }

    fn struct_variant<V: de::Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        de::Deserializer::deserialize_struct(self, "", fields, visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::unexpected;
    use serde::de::Unexpected;

    /// Every kind of unexpected value reads as serde's own display writes it, floats included
    /// (whole, fractional, tiny, huge, negative zero, infinite, NaN).
    #[test]
    fn unexpected_values_read_as_serde_writes_them() {
        let bytes = [1u8, 2];
        let mut cases = vec![
            Unexpected::Bool(true),
            Unexpected::Unsigned(u64::MAX),
            Unexpected::Signed(-7),
            Unexpected::Char('é'),
            Unexpected::Str("a \"quoted\"\nline"),
            Unexpected::Bytes(&bytes),
            Unexpected::Unit,
            Unexpected::Option,
            Unexpected::NewtypeStruct,
            Unexpected::Seq,
            Unexpected::Map,
            Unexpected::Enum,
            Unexpected::UnitVariant,
            Unexpected::NewtypeVariant,
            Unexpected::TupleVariant,
            Unexpected::StructVariant,
            Unexpected::Other("JsValue(Symbol(x))"),
        ];
        for f in [
            0.0,
            -0.0,
            1.0,
            -3.0,
            1.5,
            0.1,
            1e21,
            1e-7,
            5e-324,
            f64::MAX,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ] {
            cases.push(Unexpected::Float(f));
        }
        for u in cases {
            assert_eq!(unexpected(u), u.to_string());
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(5_000))]

        #[test]
        fn unexpected_floats_read_as_serde_writes_them(bits in proptest::prelude::any::<u64>()) {
            let u = Unexpected::Float(f64::from_bits(bits));
            proptest::prop_assert_eq!(unexpected(u), u.to_string());
        }
    }
}
