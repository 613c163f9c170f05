"""The main screen: the conversation, the prompt, and the run panel beside them.

User messages go to the session through a :class:`~tui.session_bridge.SessionBridge` in an
exclusive worker; its events are rendered as they arrive (tokens streamed into Markdown, tool
calls as collapsible blocks, schedules and cases in the run panel). An
:class:`~wass_chat.agent.events.ApprovalRequest` opens the approval modal; the session hears
``approve`` or ``edit`` only from that modal's outcome. Escape cancels a running answer.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Footer, Input
from textual.worker import Worker, WorkerState

from tui.conversation_store import (
    Conversation,
    ConversationFileError,
    ConversationStore,
    Entry,
)
from tui.gantt_data import GanttTraceError, trace_from_json
from tui.keys import bindings
from tui.screens.approval import ApprovalOutcome, ApprovalScreen
from tui.screens.case_detail import CaseDetailScreen
from tui.screens.conversations import ConversationChoice, ConversationsScreen
from tui.screens.run_detail import RunDetailScreen
from tui.session_bridge import SessionBridge
from tui.slurm_status import SlurmProbe
from tui.widgets.cases_table import CasesTable
from tui.widgets.chat_input import ChatInput
from tui.widgets.chat_log import AnswerMessage, ChatLog, SettledAnswer
from tui.widgets.run_panel import RunPanel
from tui.widgets.search_bar import SearchBar
from tui.widgets.status_header import StatusHeader
from tui.widgets.tool_call import ToolCallBlock
from tui.widgets.welcome import Welcome
from wass_chat.agent.events import (
    ApprovalRequest,
    ChatEvent,
    Final,
    ModeChanged,
    Token,
    ToolCall,
    ToolProgress,
    ToolResult,
)

ANSWER_GROUP = "answer"


class ChatScreen(Screen[None]):
    """Chat on the left, run panel on the right (on narrow terminals: one at a time)."""

    AUTO_FOCUS = "ChatInput"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (96, "-wide")]  # noqa: RUF012
    """From 96 columns the chat (at least 48) and the run panel share the screen."""
    BINDINGS = bindings("chat")  # the keys' one table: tui/keys.py

    panel_open: reactive[bool] = reactive(False)

    def __init__(
        self,
        bridge: SessionBridge,
        store: ConversationStore,
        conversation: Conversation,
        slurm_probe: SlurmProbe,
    ) -> None:
        super().__init__()
        self.bridge = bridge
        self.store = store
        self.conversation = conversation
        self.slurm_probe = slurm_probe
        self._answer: AnswerMessage | None = None

    def compose(self) -> ComposeResult:
        yield StatusHeader(self.slurm_probe)
        with Horizontal(id="main"):
            with Vertical(id="chat-column"):
                log = ChatLog(id="chat-log")
                yield log
                search = SearchBar(log, id="search-bar")
                search.display = False
                yield search
                yield ChatInput(
                    history=self.conversation.user_messages,
                    placeholder="Ask, or type / for commands (F1: help)",
                    id="prompt",
                )
            yield RunPanel(id="run-panel")
        yield Footer()

    def on_mount(self) -> None:
        self._restore(self.conversation)
        self.connect()
        self.query_one(StatusHeader).check_slurm()

    def _welcome(self) -> None:
        """Greet an empty conversation (the greeting is not part of it: never saved)."""
        if not self.conversation.entries:
            live = self.query_one(StatusHeader).slurm.state == "reachable"
            self.query_one(ChatLog).mount(Welcome(live=live))

    def on_status_header_slurm_checked(self, event: StatusHeader.SlurmChecked) -> None:
        """Offer the live-cluster questions in the greeting exactly while Slurm answers."""
        for welcome in self.query(Welcome):
            welcome.show_live(event.status.state == "reachable")

    # --- session ------------------------------------------------------------------------
    def use_bridge(self, bridge: SessionBridge, notice: str) -> None:
        """Answer through another session from now on (another model was chosen)."""
        self.bridge = bridge
        header = self.query_one(StatusHeader)
        header.mode, header.detail = "connecting", ""
        self._notice(notice)
        self.connect()

    @work(group="connect", exclusive=True)
    async def connect(self) -> None:
        """Wait for the session to open (it may probe the model server) and show its mode."""
        header = self.query_one(StatusHeader)
        try:
            session = await self.bridge.session()
        except Exception as exc:  # shown to the user, the chat stays usable for reading
            header.mode = "unavailable"
            self._notice(f"The agent could not start: {type(exc).__name__}: {exc}", "error")
            return
        header.detail = str(getattr(session, "detail", "") or "")
        header.mode = session.mode

    @property
    def answering(self) -> bool:
        return any(
            w.group == ANSWER_GROUP and w.state in (WorkerState.PENDING, WorkerState.RUNNING)
            for w in self.workers
        )

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        if not text:
            return
        if self.answering:
            self.notify("Still answering: Escape cancels it.", severity="warning")
            return
        prompt = self.query_one(ChatInput)
        prompt.remember(text)
        prompt.value = ""
        self.query_one(ChatLog).add_user(text)
        self.conversation.entries.append(Entry("user", text))
        self.answer(text)

    @work(group=ANSWER_GROUP, exclusive=True)
    async def answer(self, text: str) -> None:
        """Stream the session's events for ``text`` into the chat."""
        header = self.query_one(StatusHeader)
        header.activity = "answering… (Esc cancels)"
        try:
            async for event in self.bridge.stream(text):
                await self._render_event(event)
        except Exception as exc:  # the agent failed: say so in the chat, keep the app alive
            self._notice(f"The agent failed: {type(exc).__name__}: {exc}", "error")
        finally:
            await self._close_answer()
            header.activity = "ready"
            self.save()
            header.check_slurm()  # the answer may have found Slurm gone, or back

    async def _render_event(self, event: ChatEvent) -> None:
        log = self.query_one(ChatLog)
        match event:
            case Token(text=fragment):
                if self._answer is None:
                    self._answer = log.start_answer()
                await self._answer.write(fragment)
            case ToolCall():
                await self._close_answer()
                log.add_tool_call(event)
            case ToolProgress(call_id=call_id, text=text):
                for block in self.query(ToolCallBlock):
                    if block.call.call_id == call_id:
                        block.progress(text)
                self.query_one(StatusHeader).activity = f"{text} (Esc cancels)"
            case ToolResult():
                self._show_tool_result(event, arguments=self._arguments_of(event.call_id))
            case ApprovalRequest():
                await self._close_answer()
                self._ask_approval(event)
            case Final():
                await self._close_answer(event)
            case ModeChanged(mode=mode, detail=detail):
                header = self.query_one(StatusHeader)
                header.detail = detail
                header.mode = mode

    async def _close_answer(self, final: Final | None = None) -> None:
        """Finish the streamed answer (a Final's text replaces a differing stream)."""
        answer, self._answer = self._answer, None
        if answer is not None:
            await answer.finish(final.text if final is not None else None)
        elif final is not None and final.text:  # nothing was streamed: show the answer whole
            answer = self.query_one(ChatLog).start_answer(final.text)
        if answer is not None and answer.text:
            self.conversation.entries.append(Entry("assistant", answer.text))
        if final is not None:
            if not final.verified:
                self._notice("The model's text did not match its facts: showing the facts.")
            if final.cited_ids:
                self._notice("cites: " + ", ".join(final.cited_ids), "cites")

    def _arguments_of(self, call_id: str) -> dict[str, Any]:
        for block in self.query(ToolCallBlock):
            if block.call.call_id == call_id:
                return dict(block.call.arguments)
        return {}

    def _show_tool_result(self, result: ToolResult, arguments: dict[str, Any]) -> None:
        self.query_one(ChatLog).complete_tool(result)
        self.conversation.entries.append(
            Entry(
                "tool",
                result.summary,
                {
                    "call_id": result.call_id,
                    "name": result.name,
                    "arguments": arguments,
                    "summary": result.summary,
                    "error": result.error,
                    "data": {k: v for k, v in result.data.items() if k != "gantt"},
                },
            )
        )
        if isinstance(result.data.get("gantt"), dict):
            self.show_gantt(result.data["gantt"])
        if isinstance(result.data.get("cases"), list):
            self.show_cases(result.data["cases"], str(result.data.get("workflow") or ""))

    def show_gantt(self, data: dict[str, Any], announce: bool = True) -> None:
        """Draw a trace in the run panel; open the panel when there is room for it."""
        try:
            trace = trace_from_json(data)
        except GanttTraceError as exc:
            self._notice(f"Cannot draw the schedule: {exc.one_line()}", "error")
            return
        panel = self.query_one(RunPanel)
        panel.show_trace(trace)
        self._remember_panel(panel)
        if self.has_class("-wide"):
            self.panel_open = True
        elif announce and not self.panel_open:
            self._notice("Schedule ready: F2 shows the run panel, F3 the full view.")

    def show_cases(self, cases: list[dict[str, Any]], subject: str = "") -> None:
        """List the cases retrieved for workflow ``subject`` in the run panel."""
        panel = self.query_one(RunPanel)
        panel.show_cases([c for c in cases if isinstance(c, dict)], subject)
        self._remember_panel(panel)

    def _remember_panel(self, panel: RunPanel) -> None:
        """Keep in the conversation what the panel shows (one subject: see RunPanel)."""
        self.conversation.gantt = panel.trace.to_json() if panel.trace else None
        self.conversation.cases = panel.cases
        self.conversation.cases_subject = panel.cases_subject

    # --- approvals: the only path to approve ------------------------------------------------
    def _ask_approval(self, request: ApprovalRequest) -> None:
        self._notice(f"Approval needed: {request.action}", "approval")

        def decided(outcome: ApprovalOutcome | None) -> None:
            self.apply_decision(request, outcome or ApprovalOutcome("reject"))

        self.app.push_screen(ApprovalScreen(request), decided)

    @work(group="approval")
    async def apply_decision(self, request: ApprovalRequest, outcome: ApprovalOutcome) -> None:
        """Tell the session what the human decided in the modal, and show what it did."""
        verb = {"approve": "Approved", "edit": "Approved (edited)", "reject": "Rejected"}
        self._notice(f"{verb[outcome.decision]}: {request.action}", "approval")
        try:
            result = await self.bridge.resolve_approval(
                request.request_id, outcome.decision, outcome.plan, outcome.digest
            )
        except Exception as exc:  # shown in the chat: the decision's fate must be visible
            self._notice(f"The decision could not be applied: {exc}", "error")
        else:
            self._show_tool_result(result, arguments={"decision": outcome.decision})
        self.save()

    # --- actions ----------------------------------------------------------------------------
    def action_cancel_answer(self) -> None:
        """Escape: stop the running answer (and its tool); on a narrow screen, else close the
        panel."""
        if self.answering:
            self.bridge.cancel()
            self.workers.cancel_group(self, ANSWER_GROUP)
            for block in self.query(ToolCallBlock):
                block.stop()
            self._notice("Answer cancelled.")
        elif self.panel_open and self.has_class("-narrow"):
            self.panel_open = False

    def action_toggle_panel(self) -> None:
        self.panel_open = not self.panel_open

    def watch_panel_open(self, panel_open: bool) -> None:
        self.set_class(panel_open, "-panel-open")
        if not panel_open:
            self.query_one(ChatInput).focus()

    def action_open_run(self) -> None:
        panel = self.query_one(RunPanel)
        self.app.push_screen(RunDetailScreen(panel.trace, panel.cases))

    def on_cases_table_case_chosen(self, event: CasesTable.CaseChosen) -> None:
        self.app.push_screen(CaseDetailScreen(event.case))

    def action_find(self) -> None:
        """Ctrl+F: find in the conversation."""
        self.query_one(SearchBar).open()

    def action_copy_answer(self) -> None:
        """Ctrl+Y: copy the answer found by the search, else the last answer, as Markdown."""
        found = self.query_one(SearchBar).current
        answers = list(self.query(AnswerMessage))
        if isinstance(found, AnswerMessage | SettledAnswer):
            answer: AnswerMessage | SettledAnswer | None = found
        else:
            answer = answers[-1] if answers else None
        if answer is None or not answer.text:
            self.notify("No answer to copy yet.", severity="warning")
            return
        self.app.copy_to_clipboard(answer.text)
        self.notify(f"Answer copied ({len(answer.text)} characters).", title="Copy")

    def action_new_conversation(self) -> None:
        self.open_conversation(Conversation.new())

    def action_conversations(self) -> None:
        """Ctrl+O: the saved conversations, to switch to, rename or delete."""
        self.save_now()

        def chosen(choice: ConversationChoice | None) -> None:
            if choice is None:
                return
            if choice.open is not None and choice.open != self.conversation.id:
                try:
                    conversation = self.store.load(choice.open)
                except ConversationFileError as exc:
                    self._notice(f"Cannot open it: {exc.one_line()}", "error")
                    return
                self.open_conversation(conversation, save_current=not choice.fresh)
            elif choice.fresh and choice.open is None:
                self.open_conversation(Conversation.new(), save_current=False)

        self.app.push_screen(ConversationsScreen(self.store, self.conversation.id), chosen)

    def open_conversation(self, conversation: Conversation, save_current: bool = True) -> None:
        """Show ``conversation`` instead of the current one (which is saved first)."""
        if self.answering:
            self.action_cancel_answer()
        if save_current:
            self.save()
        self.conversation = conversation
        self.query_one(ChatLog).clear()
        self.query_one(RunPanel).reset()
        self.panel_open = False
        self._restore(conversation)

    # --- persistence --------------------------------------------------------------------------
    def save_now(self) -> None:
        """Write the conversation on this thread (before listing the saved ones)."""
        if self.conversation.entries:
            self.store.save(self.conversation)

    def save(self) -> None:
        """Write the conversation (atomically, off the UI thread) once it has a message."""
        if self.conversation.entries:
            snapshot = Conversation.from_json(self.conversation.to_json(), source="memory")
            self.run_worker(
                partial(self.store.save, snapshot), thread=True, group="save", exit_on_error=False
            )

    def _restore(self, conversation: Conversation) -> None:
        """Rebuild the screen of a resumed conversation (an empty one gets the greeting)."""
        self._welcome()
        self.query_one(ChatLog).replay(conversation.entries)
        if conversation.gantt:
            self.show_gantt(conversation.gantt, announce=False)
        if conversation.cases:
            self.show_cases(conversation.cases, conversation.cases_subject)

    def _notice(self, text: str, kind: str = "info") -> None:
        self.query_one(ChatLog).add_notice(text, kind)
        self.conversation.entries.append(Entry("notice", text))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state != WorkerState.ERROR:
            return
        if event.worker.group == "save":
            self.notify(f"Could not save the conversation: {event.worker.error}", severity="error")
