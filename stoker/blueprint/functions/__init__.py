"""The 17 blueprint intrinsic functions, one module per family; ``table.FUNCTIONS`` lists them."""
