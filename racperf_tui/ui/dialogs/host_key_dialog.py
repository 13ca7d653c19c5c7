"""A node's host key no known_hosts file trusts, shown for the user to accept or reject.

The dialog shows the host as known_hosts names it, the key type and its SHA256 fingerprint
(as ``ssh-keygen -l`` and OpenSSH print it) and the file the key goes into; Accept (a) records
it there (``core.ssh.record_host_key``), Reject (r, esc) writes nothing. A *changed* key is
never offered: :func:`trust_host_key` raises its refusal, which names both fingerprints and
the file:line on record.

:func:`trust_host_key` is the one way a view reaches a node for the first time: called from a
worker thread, it connects, asks the user on the UI thread when the key is unknown, records
an accepted key and connects again to prove it.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widget import Widget
from textual.widgets import Button, Static

from racperf_tui.core.remote import ssh
from racperf_tui.core.remote.cluster import Node
from racperf_tui.core.remote.ssh import HostKeyError, HostKeyOffer, SshTarget
from racperf_tui.ui.screen_base import RacperfModalScreen
from racperf_tui.ui.shown import plain


class HostKeyDialog(RacperfModalScreen[bool]):
    """Accept (True) or reject (False) a host key seen for the first time."""

    BINDINGS = [
        Binding("a", "answer(True)", "Accept"),
        Binding("r,escape", "answer(False)", "Reject"),
    ]
    # a stray enter must not trust a key: the safe answer has the focus. Declared, not queried
    # in on_mount: a key answered before the screen's mount (under load) left on_mount a
    # screen without children (NoMatches)
    AUTO_FOCUS = "#host-key-reject"

    def __init__(self, offer: HostKeyOffer, node: str = "") -> None:
        super().__init__()
        self.offer = offer
        self.node = node

    def compose(self) -> ComposeResult:
        offer = self.offer
        named = f"node {plain(self.node)} " if self.node and self.node != offer.host else ""
        with Vertical():
            yield Static(f"[b]The authenticity of {named}{plain(offer.host)} is not known[/b]", id="host-key-title")
            yield Static(f"host:        {plain(offer.host)}", id="host-key-host", markup=False)
            yield Static(f"key type:    {plain(offer.algorithm)}", id="host-key-type", markup=False)
            yield Static(f"fingerprint: {plain(offer.fingerprint)}", id="host-key-fingerprint", markup=False)
            yield Static(
                "Compare it with the node's own (ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub on it). "
                f"Accept records it in {plain(offer.file)}; racperf then trusts it on every connection.",
                id="host-key-advice",
                markup=False,
            )
            with Horizontal():
                yield Button("Accept (a)", id="host-key-accept", variant="warning")
                yield Button("Reject (r)", id="host-key-reject", variant="primary")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "host-key-accept")

    def action_answer(self, accept: bool) -> None:
        self.dismiss(accept)


class HostKeyRejected(HostKeyError):
    """The user rejected the key shown (nothing was written)."""


def ask_in_thread(app: App[object], offer: HostKeyOffer, node: str = "") -> bool:
    """From a worker thread: show the dialog on the UI thread and wait for the answer; an app
    that ends with the dialog open (ctrl+q) answers no, else this thread would wait for ever
    and keep the process from exiting."""
    answer: Future[bool] = Future()

    def show() -> None:
        app.push_screen(HostKeyDialog(offer, node), lambda accepted: answer.set_result(bool(accepted)))

    app.call_from_thread(show)
    while True:
        try:
            return answer.result(timeout=0.25)
        except TimeoutError:
            if not app.is_running:
                return False


def trust_host_key(
    app: App[object], target: SshTarget, node: str = "", timeout_s: float = ssh.CONNECT_TIMEOUT_S
) -> None:
    """From a worker thread: make sure the node's host key is trusted, asking the user when it
    is unknown. Returns once a connection verified it; raises HostKeyRejected (the user said
    no), HostKeyError (a changed key: never offered) or another SshError (unreachable...)."""
    try:
        ssh.connect(target, fresh=True, timeout_s=timeout_s).close()
        return
    except HostKeyError as exc:
        if exc.changed or exc.offer is None:
            raise
        offer = exc.offer
    if not ask_in_thread(app, offer, node):
        raise HostKeyRejected(
            f"{offer.host}: host key {offer.algorithm} {offer.fingerprint} rejected: nothing recorded",
            changed=False,
            fingerprint=offer.fingerprint,
        )
    try:
        ssh.record_host_key(offer)
    except OSError as exc:
        raise ssh.SshError(
            f"cannot record the host key of {offer.host} in {offer.file}: {exc.strerror or exc}"
        ) from None
    # the node may offer another key now (a man in the middle swapping keys): that is refused
    # as changed, since the accepted one is on record
    ssh.connect(target, fresh=True, timeout_s=timeout_s).close()


class NodeHostKeys:
    """The host keys of a view's nodes (the Cluster tab's): a node refused as unknown is asked
    about once (the dialog, from a worker thread), ``on_trusted(name)`` called once its key
    is accepted and recorded; a changed key is said loudly, once, and never offered."""

    def __init__(self, widget: Widget, on_trusted: Callable[[str], None]) -> None:
        self.widget = widget
        self.on_trusted = on_trusted
        self._asked: set[str] = set()
        self._told: set[str] = set()

    def check(self, node: Node, reason: str) -> None:
        """On the UI thread, with the node's reason for not being sampled."""
        if reason.startswith("host key changed") and node.name not in self._told:
            self._told.add(node.name)
            self.widget.notify(
                f"node {node.name}: {reason}", title="HOST KEY CHANGED: refused", severity="error", timeout=60
            )
        elif reason.startswith("host key unknown") and node.name not in self._asked and not node.is_local:
            self._asked.add(node.name)
            self.widget.run_worker(lambda: self._trust(node), thread=True, group="host-keys")

    def _trust(self, node: Node) -> None:
        app = self.widget.app
        try:
            trust_host_key(app, node.ssh_target(), node.name)
        except HostKeyRejected as exc:  # asked once: the card keeps saying why it is not sampled
            app.call_from_thread(self.widget.notify, f"node {node.name}: {exc}", severity="warning")
        except HostKeyError as exc:  # changed meanwhile: the card says it
            app.call_from_thread(self.widget.notify, f"node {node.name}: {ssh.one_line(exc)}", severity="error")
        except (OSError, ValueError):  # not reachable now: ask again when it is
            app.call_from_thread(self._asked.discard, node.name)
        else:
            app.call_from_thread(self.on_trusted, node.name)
