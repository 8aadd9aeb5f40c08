fn main() {
    println!("{}", trainc::spec::json_schema_text());
}
