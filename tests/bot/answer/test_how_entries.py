"""Which definition a how-answer starts from, and how far its path goes (issue 26).

Small real repositories, indexed with the symbol table and asked with no model: a thin
wrapper whose doc comment holds the question's words leads on to the code that does the
work; a test module kept beside the code is never the entry; of two definitions of a
name the question says, the one in the file named after it (or of the class the
question names) is where the path starts.
"""

from __future__ import annotations

from bot.config import FileConfig, Settings
from bot.core import CLI, Core
from tests.support.gitrepo import GitRepo

METHOD_RS = """use crate::route::Route;

/// Create a filter that requires the request method to be `POST`.
///
/// ```
/// let post_only = warp::post().map(warp::reply);
/// ```
pub fn post() -> Filter {
    method_is(|| &Method::POST)
}

fn method_is(want: fn() -> &'static Method) -> Filter {
    filter_fn(move |route: &Route| {
        if route.verb() == want() {
            Ok(())
        } else {
            Err(not_allowed())
        }
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn post_filter_checks_post_method_post() {
        let post = super::post();
        assert!(post.matches("POST"), "the post method filter checks POST");
    }
}
"""

ROUTE_RS = """pub struct Route {
    verb: Method,
}

impl Route {
    pub fn verb(&self) -> &Method {
        &self.verb
    }
}
"""


def _repo(make_repo: object, name: str, files: dict[str, str]) -> GitRepo:
    repo = make_repo(name)  # type: ignore[operator]
    assert isinstance(repo, GitRepo)
    for path, text in files.items():
        repo.write(path, text)
    repo.commit("code")
    return repo


def _ask(repo: GitRepo, name: str, question: str) -> str:
    core = Core.from_settings(Settings(), FileConfig())
    try:
        core.index_repo(str(repo.path), name=name)
        return core.ask(question, CLI, repos=frozenset({name})).text
    finally:
        core.close()


def test_a_thin_wrapper_leads_on_to_the_code_that_does_the_work(
    make_repo: object, tmp_path: object, monkeypatch: object
) -> None:
    monkeypatch.setenv("CODECITE_HOME", str(tmp_path / "home"))  # type: ignore[attr-defined]
    repo = _repo(make_repo, "web", {"src/method.rs": METHOD_RS, "src/route.rs": ROUTE_RS})
    text = _ask(repo, "web", "how does the method filter check for POST?")
    first = text.split("\n", 1)[0]
    assert first.startswith("The path through the code: `post` → `method_is`"), text
    assert "tests." not in text.split("\n\n", 1)[0]  # the test module is no step
    # the wrapper's one call is in the path line: the first excerpt is the code that checks
    blocks = text.split("\n\n")
    assert blocks[1].startswith("**src/method.rs:L") and "`method_is`" in blocks[1], text
    assert "route.verb() == want()" in blocks[1]


SHOP_JS = """const { priceOf } = require('./lib/prices')

function shop (options) {
  const opts = Object.assign({}, options)
  const cart = makeCart(opts)
  return cart
}

function makeCart (opts) {
  return { items: [], currency: opts.currency, price: priceOf }
}

module.exports = shop
"""

BROWSER_JS = """function shop (options) {
  // the browser build: a new cart is built for the page, a new cart for each call
  const cart = { items: [], newCart: true, built: 'cart' }
  return cart
}

module.exports = shop
"""


def test_of_two_definitions_of_a_named_function_the_file_named_after_it_leads(
    make_repo: object, tmp_path: object, monkeypatch: object
) -> None:
    monkeypatch.setenv("CODECITE_HOME", str(tmp_path / "home"))  # type: ignore[attr-defined]
    prices = "exports.priceOf = (x) => x\n"
    files = {"shop.js": SHOP_JS, "browser.js": BROWSER_JS, "lib/prices.js": prices}
    repo = _repo(make_repo, "shop", files)
    text = _ask(repo, "shop", "how does a new cart get built when you call shop()?")
    assert "**shop.js:L" in text.split("\n\n")[1], text  # the first excerpt: shop.js's own
