impl Foo { // c
    fn new() -> Self { Self::make() }
}
use a::{B as C, d::*};
