"""Generic report sections (``family = "*"``): they name no family, problem, solver or dataset."""
