"""A few clients trickling their headers or bodies must not make the service unreachable for everyone else
(issue #9: two connections sending headers at 1 byte a second stalled every sync worker)."""

import time

from tests.server.clients import BODY_HEAD, HEAD_START, PROMPT_SECONDS, probe, tricklers_running


def test_other_clients_are_answered_promptly_while_a_few_clients_trickle_headers_and_bodies(address):
    with tricklers_running(address, [HEAD_START, BODY_HEAD], 4) as running:
        probes = []
        for _ in range(8):
            probes.append(probe(address))
            time.sleep(0.1)
        still_trickling = running()

    assert still_trickling == 8  # the attack lasted the whole time
    assert [status for status, _ in probes] == [401] * 8, probes
    assert max(seconds for _, seconds in probes) < PROMPT_SECONDS, probes
