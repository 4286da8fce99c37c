# Python mcp (the official SDK) against the MCP route: two tools/call, the second refused by the
# limits (design §29). Prints one JSON line: the error the SDK raised, as it reports it.
import asyncio, json, sys
from mcp import ClientSession, MCPError
from mcp.client.streamable_http import streamable_http_client

async def main(url):
    async with streamable_http_client(url) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            first = await session.call_tool("ask", {"message": "hi"})
            try:
                await session.call_tool("ask", {"message": "again"})
                print(json.dumps({"first": first.is_error, "second": "answered"}))
            except MCPError as error:
                print(json.dumps({"first": first.is_error, "code": error.error.code, "message": error.error.message, "data": error.error.data}))

asyncio.run(main(sys.argv[1]))
