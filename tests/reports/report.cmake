# gcbench report's pure library: the SVG chart library; train's tables. The HTML and Markdown
# reports with the families' views are tested where the family table is (tests/bench/report).
gcb_add_test(test_svg_chart SOURCES test_svg_chart.cpp LIBS gcb_reports)
gcb_add_test(test_train_table SOURCES test_train_table.cpp LIBS gcb_reports)
