#[derive(Debug)]
pub struct CalcError(pub String);
impl std::fmt::Display for CalcError { fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { f.write_str(&self.0) } }
impl std::error::Error for CalcError {}
pub fn calculate(_e: &str) -> Result<f64, CalcError> { Err(CalcError("stub".into())) }
