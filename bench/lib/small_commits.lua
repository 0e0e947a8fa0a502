-- bench/lib/small_commits.lua — sysbench's oltp_update_index (one single-row autocommit
-- UPDATE ... SET k=k+1 WHERE id=? per event) with a start and a stop signal, for
-- `bench/run --commit`'s large-transaction part (bench/lib/commit.py): the small commits whose
-- latency is measured while one big transaction commits.
--
-- Environment (each optional; without them this is oltp_update_index):
--   SB_READY_FILE  created by each thread once it is connected and its statements are prepared
--   SB_GO_FILE     each thread waits (polling every 5 ms) until this file exists before its
--                  first event, so the measured events start when the harness says
--   SB_STOP_FILE   once this file exists the next event ends the run (sysbench then prints
--                  its normal report: latency percentile, max, histogram)
-- Used as `sysbench bench/lib/small_commits.lua --threads=1 ... run`; the harness bounds the
-- run with --time as well, so a lost stop file cannot make it hang.

require("oltp_common")

ffi.cdef[[int usleep(unsigned int usec);]]

local ready_file = os.getenv("SB_READY_FILE")
local go_file = os.getenv("SB_GO_FILE")
local stop_file = os.getenv("SB_STOP_FILE")

local function exists(path)
   local f = io.open(path, "r")
   if f then
      f:close()
      return true
   end
   return false
end

function prepare_statements()
   prepare_index_updates()
end

local common_thread_init = thread_init

function thread_init()
   common_thread_init()
   if ready_file then
      local f = io.open(ready_file .. "." .. sysbench.tid, "w")
      if f then
         f:close()
      end
   end
   if go_file then
      while not exists(go_file) do
         ffi.C.usleep(5000)
      end
   end
end

function event()
   if stop_file and exists(stop_file) then
      return true
   end
   execute_index_updates(con)
end
