# gcbench report's pure library: the SVG chart library, HTML and Markdown renderers; train's tables.
gcb_add_test(test_svg_chart SOURCES test_svg_chart.cpp LIBS gcb_reports)
gcb_add_test(test_report SOURCES test_report.cpp LIBS gcb_reports)
gcb_add_test(test_train_table SOURCES test_train_table.cpp LIBS gcb_reports)
