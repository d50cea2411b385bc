from shop.cart import Cart, Item


def test_total_with_coupon():
    cart = Cart()
    cart.add(Item("tea", 10.0, 2))
    assert cart.total(coupon_percent=50) == 12.0


def test_adding_the_same_item_twice_adds_quantity():
    cart = Cart()
    cart.add(Item("tea", 1.0))
    cart.add(Item("tea", 1.0))
    assert cart.items[0].quantity == 2
