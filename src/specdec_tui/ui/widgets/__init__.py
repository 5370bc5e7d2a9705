"""Display widgets, one a file; each documents its API in its module docstring. Import them from their
modules (`ui.widgets.bench_table.BenchTable`); the main screen reaches them through typed properties."""
