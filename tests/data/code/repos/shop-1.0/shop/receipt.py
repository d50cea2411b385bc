"""Printing receipts."""

from shop.cart import Cart


class Receipt:
    def __init__(self, cart: Cart):
        self.cart = cart

    def lines(self):
        """One line per item, then the total."""
        out = [f"{item.name} x{item.quantity}: {item.subtotal():.2f}" for item in self.cart.items]
        out.append(f"total: {self.cart.total():.2f}")
        return out


def print_receipt(cart):
    for line in Receipt(cart).lines():
        print(line)
