"""The shopping cart."""

from .prices import discount, with_tax


class Item:
    """A product and how many of it."""

    def __init__(self, name, price, quantity=1):
        self.name = name
        self.price = price
        self.quantity = quantity

    def subtotal(self):
        return self.price * self.quantity


class Cart:
    """Items a customer is about to buy."""

    def __init__(self):
        self.items = []

    def add(self, item):
        """Adds an item; the same product twice adds up its quantity."""
        for existing in self.items:
            if existing.name == item.name:
                existing.quantity += item.quantity
                return
        self.items.append(item)

    def total(self, coupon_percent=0):
        """What the customer pays: subtotals, less the coupon, plus tax."""
        amount = sum(item.subtotal() for item in self.items)
        return with_tax(discount(amount, coupon_percent))
