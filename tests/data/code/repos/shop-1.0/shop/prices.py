"""Prices and discounts."""

TAX_RATE = 0.2


def with_tax(amount):
    """The amount with tax added."""
    return round(amount * (1 + TAX_RATE), 2)


def discount(amount, percent):
    """The amount less a percentage; a percentage over 100 is refused."""
    if percent > 100:
        raise ValueError("a discount cannot exceed 100 percent")
    return amount * (100 - percent) / 100
