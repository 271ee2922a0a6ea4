"""docs/ops_table.md is generated from the op registry and the catalogue, and must not be stale."""

from tensorlib.ops import table


def test_ops_table_is_up_to_date():
    with open(table.TABLE_PATH, encoding="utf-8") as f:
        written = f.read()
    assert written == table.render(), (
        f"docs/ops_table.md is stale (an op type was added, or its gradient or catalogue status changed): "
        f"regenerate it with `{table.COMMAND}` and commit it"
    )


def test_table_lists_every_builtin_op_with_its_status():
    rows = {row["op type"]: row for row in table.rows()}
    assert rows["Add"]["gradient"] == "x, y" and rows["Add"]["2nd order"] == "checked"
    assert rows["ArgSort"]["gradient"] == "not differentiable" and rows["ArgSort"]["2nd order"] == "n/a"
    assert rows["ConcatV2"]["gradient"] == "each input"
    assert rows["GatherV2"]["gradient"] == "params"
    assert rows["Cumsum"]["defined in"] == "ops/array.py" and rows["Ceil"]["2nd order"] == "n/a"
    assert all(row["gradient"] != "MISSING" and row["traced"] == "checked" for row in rows.values())


def test_check_option_reports_a_stale_file(tmp_path, monkeypatch, capsys):
    stale = tmp_path / "ops_table.md"
    stale.write_text("# Op types\n")
    assert table.is_stale(str(stale)) and not table.is_stale(table.TABLE_PATH)
    assert table.main(["--check"]) == 0
    monkeypatch.setattr(table, "TABLE_PATH", str(stale))
    assert table.main(["--check"]) == 1
    assert f"is stale: run {table.COMMAND}" in capsys.readouterr().out


def test_the_vmap_column_says_how_vmap_computes_each_op():
    rows = {row["op type"]: row["vmap"] for row in table.rows()}
    assert rows["Conv2D"] == rows["Conv2DBackpropFilter"] == rows["Einsum"] == "batched"
    assert rows["Unique"] == "per element"  # its result's shape depends on the values
    assert rows["Dropout"] == "batched" and rows["RandomUniform"] == "randomness="
    assert {rows[name] for name in rows} <= {"batched", "per element", "shape only", "randomness="}
