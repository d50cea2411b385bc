"""A small shop: carts, prices and receipts."""
