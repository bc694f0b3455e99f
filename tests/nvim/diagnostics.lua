-- Neovim 0.7+ headless: start the dyn-inspect language server on a file, wait for its
-- diagnostics, write them to a JSON file and quit. Driven by tests/e2e/test_nvim.py as
--   nvim --headless --clean -c "luafile tests/nvim/diagnostics.lua"
-- (0.7 has no `nvim -l`).
-- Settings come from the environment: DYN_NVIM_FILE (the file to open), DYN_NVIM_ROOT,
-- DYN_NVIM_RUNS (runsDir), DYN_NVIM_PYTHON, DYN_NVIM_OUT, DYN_NVIM_WAIT (ms).
local env = vim.env
local file, root, out = env.DYN_NVIM_FILE, env.DYN_NVIM_ROOT, env.DYN_NVIM_OUT
local wait_ms = tonumber(env.DYN_NVIM_WAIT or "60000")

local function finish(result)
  local f = assert(io.open(out, "w"))
  f:write(vim.fn.json_encode(result))
  f:close()
  vim.cmd("qall!")
end

vim.cmd("edit " .. vim.fn.fnameescape(file))
local buf = vim.api.nvim_get_current_buf()
vim.bo[buf].filetype = "python"
local client_id = vim.lsp.start_client({
  name = "dyn-inspect",
  cmd = { env.DYN_NVIM_PYTHON, "-m", "dyn_inspect.lsp" },
  root_dir = root,
  init_options = { dynInspect = { runsDir = env.DYN_NVIM_RUNS } },
})
if client_id == nil then
  finish({ error = "start_client failed" })
  return
end
vim.lsp.buf_attach_client(buf, client_id)

-- the verified hint is what the test is about: wait for it (or give up and report what came)
local function verified()
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.message:find("fixed ✓", 1, true) then
      return true
    end
  end
  return false
end
local ok = vim.wait(wait_ms, verified, 100)
local diags = {}
for _, d in ipairs(vim.diagnostic.get(buf)) do
  table.insert(diags, { lnum = d.lnum, col = d.col, severity = d.severity, message = d.message, source = d.source or "", code = d.code and tostring(d.code) or "" })
end
finish({ verified = ok, diagnostics = diags })
