"""Definitions that are not chunks of their own, found end to end (issue 26).

Type aliases, objects of functions, constants, properties and methods made by a call
(`define_method`, `attr_reader`) are asked about through a real Core over a real git
repository: "where is X defined" must cite their line first, "who calls X" must cite a
call site first and the definition after it.
"""

from __future__ import annotations

import pytest

from bot.config import FileConfig, Settings
from bot.core import CLI, Core

FILES = {
    "web/api.ts": """\
import { request } from "./http";

/** What a caller may pass to every request. */
export type RequestOptions = { retries: number; timeoutMs: number };

export interface Transport {
  send(body: string): Promise<void>;
}

export const DEFAULT_RETRIES = 3;

export const api = {
  fetchUser: (id: string) => request(`/users/${id}`),
  saveUser(user: object) {
    return request("/users", user);
  },
};

export const handler = async (event: object) => api.fetchUser(String(event));
""",
    "web/app.ts": """\
import { api, handler } from "./api";

export function profile(id: string) {
  return api.fetchUser(id);
}

export function main() {
  return handler({});
}
""",
    "store/ids.go": """\
package store

// UserID names a user in every table.
type UserID int64

const (
	// MaxBatch is the most rows one insert writes.
	MaxBatch = 500
	minBatch = 1
)
""",
    "src/limits.rs": """\
/// The most connections a pool opens.
pub const MAX_CONNECTIONS: usize = 64;

pub type Port = u16;
""",
    "src/main/java/acme/Limits.java": """\
package acme;

public class Limits {
    public static final int PAGE_SIZE = 50;
    private int used = 0;
}
""",
    "Acme/Account.cs": """\
namespace Acme {
    public class Account {
        public decimal Balance { get; private set; }
        public const int MaxOwners = 4;
        public delegate void Changed(Account account);
    }
}
""",
    "lib/flag.rb": """\
class Flag
  attr_reader :percent

  define_method(:toggle) do
    percent > 0
  end
end
""",
}

CASES = [
    ("where is RequestOptions defined?", "web/api.ts:L4"),
    ("where is DEFAULT_RETRIES defined?", "web/api.ts:L10"),
    ("where is api.fetchUser defined?", "web/api.ts:L13"),
    ("where is saveUser defined?", "web/api.ts:L14-L16"),
    ("where is the UserID type defined?", "store/ids.go:L4"),
    ("where is MaxBatch defined?", "store/ids.go:L8"),
    ("where is MAX_CONNECTIONS defined?", "src/limits.rs:L2"),
    ("where is PAGE_SIZE defined?", "src/main/java/acme/Limits.java:L4"),
    ("where is the Balance property defined?", "Acme/Account.cs:L3"),
    ("where is MaxOwners defined?", "Acme/Account.cs:L4"),
    ("where is toggle defined?", "lib/flag.rb:L4-L6"),
    ("where is percent defined?", "lib/flag.rb:L2"),
]


@pytest.fixture
def core(make_repo):
    repo = make_repo("shop")
    for path, text in FILES.items():
        repo.write(path, text)
    repo.commit("shop")
    bot = Core.from_settings(Settings(), FileConfig())
    bot.index_repo(str(repo.path), name="shop")
    yield bot
    bot.close()


def test_each_definition_is_cited_first(core: Core) -> None:
    wrong = []
    for question, first in CASES:
        answer = core.ask(question, CLI)
        cited = answer.citations[0].label if answer.citations else "nothing"
        if cited != first:
            wrong.append(f"{question} cited {cited}, not {first}:\n{answer.text}")
    assert not wrong, "\n\n".join(wrong)


def test_callers_cite_a_call_site_first_and_the_definition_after(core: Core) -> None:
    answer = core.ask("who calls api.fetchUser?", CLI)
    labels = [c.label for c in answer.citations]
    assert labels[:2] == ["web/app.ts:L4", "web/api.ts:L19"] or labels[:2] == [
        "web/api.ts:L19",
        "web/app.ts:L4",
    ], answer.text
    assert labels[-1] == "web/api.ts:L13", answer.text
    assert answer.text.index("Called from") < answer.text.index("The definition:")


def test_arrow_function_export_has_its_callers(core: Core) -> None:
    answer = core.ask("who calls handler?", CLI)
    assert [c.label for c in answer.citations] == ["web/app.ts:L8", "web/api.ts:L19"], answer.text
