//! Tests of `test_tools::table`: text, Markdown, CSV and JSON renderings.

use serde_json::Value as Json;
use test_tools::table::*;

fn sample() -> Table {
    let mut t = Table::new(vec![
        Column::new("impl", "implementation"),
        Column::new("n", "n")
            .right()
            .csv(Style::Fixed(1))
            .missing("-"),
        Column::new("note", "note").text_only(),
        Column::new("raw", "raw").json_only(),
    ]);
    t.push(vec![
        Value::text("x,y"),
        Value::Int(100),
        Value::text("a|b"),
    ]);
    t.blank();
    t.push(vec![
        Value::text("say \"hi\""),
        Value::Empty,
        Value::Empty,
        Value::Json(Json::from(7)),
    ]);
    t
}

#[test]
fn text_markdown_csv_and_json() {
    let t = sample();
    assert_eq!(
        t.render(),
        "impl        n  note\n--------  ---  ----\nx,y       100  a|b\n\nsay \"hi\"    -\n"
    );
    assert_eq!(
        t.markdown(),
        "| impl | n | note |\n|---|---|---|\n| x,y | 100 | a\\|b |\n| say \"hi\" | - |  |\n"
    );
    assert_eq!(
        t.to_csv(),
        "implementation,n\n\"x,y\",100\n\"say \"\"hi\"\"\",\n"
    );
    let json = t.to_json();
    assert_eq!(
        json[0],
        serde_json::json!({"implementation": "x,y", "n": 100, "raw": null})
    );
    assert_eq!(json[1]["raw"], 7);
    let mut numbers = Table::titled(&["k", "v"]);
    numbers.push_text(["a", "12"]);
    assert!(numbers.markdown().contains("|---|---:|"));
}

#[test]
fn thousands_separators() {
    assert_eq!(thousands(0.4), "0");
    assert_eq!(thousands(999.0), "999");
    assert_eq!(thousands(1234567.8), "1,234,568");
    assert_eq!(thousands(-1500.0), "-1,500");
    assert_eq!(thousands(f64::NAN), "n/a");
}
