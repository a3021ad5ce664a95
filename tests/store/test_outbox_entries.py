"""An outbox entry keeps a card's facts and a live reference as values, so what delivery
reads after a restart is what the handler wrote."""

from __future__ import annotations

from bot.domain.incident.incident_card import CARD, IncidentCard, LiveRef
from bot.domain.messages import Outbound, Reply
from bot.store.outbox import decode, encode


def test_a_card_and_a_reference_come_back_from_the_outbox_as_they_went_in():
    facts = IncidentCard("INC-7", 7, 4, "missile", "Throwing missiles", "STB walkway",
                         "closed", "Closed")
    out = Outbound("control,command", Reply("words", title="🟠 INC-7", card=facts),
                   ref="INC-7", fixture="fx")
    back = decode(encode(out))
    assert back.reply.card == facts and back.reply.card.closed
    ref = Outbound("control", Reply(""), ref="INC-7", fixture="fx", live=LiveRef(CARD, 7))
    assert decode(encode(ref)).live == LiveRef(CARD, 7)
    assert decode(encode(Outbound("control", Reply("plain")))).reply.card is None
