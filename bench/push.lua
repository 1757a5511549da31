-- wrk script for single pushes (bench/batch_load.py; bench/push_load.py uses changing.lua by name): the pushes of
-- bench/changing.lua, which this loads. Each wrk thread sends its own ids, every push a change, every answer
-- counted ("answers: ..." after wrk's figures). Until 2026-11-24 both threads drew from the same 20,000 ids, so
-- about half of the "changing" pushes repeated what the other thread had just sent and changed nothing.
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(here .. "changing.lua")
