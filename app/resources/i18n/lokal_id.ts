<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="id_ID" sourcelanguage="en">
<context>
    <name>ChatView</name>
    <message>
        <source>Conversation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ask anything. Your messages stay on this machine.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>CloseWhileServing</name>
    <message>
        <source>Keep serving the API?</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>The API is answering %n request(s) right now.</source>
        <translation type="unfinished">
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>Quitting stops the API and cuts those replies off. Lokal can keep serving in the background instead.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Lokal is serving the API at {url}.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>this machine</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Quitting stops the API, and programs that use it lose it. Lokal can keep serving in the background instead.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Keep serving in the background</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop the API and quit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Serving the API in the background</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show Lokal</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Lokal is serving the API at {url}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Lokal keeps serving the API</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Click the Lokal icon to open the window again.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>InlineEditor</name>
    <message>
        <source>Edit your message</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Enter resends it and replaces the replies after it; Shift+Enter starts a new line; Esc cancels</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Enter to resend · Shift+Enter for a new line · Esc to cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Keep the message as it was</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Resend</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send the edited message; the replies after it are replaced</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>&amp;Edit last message</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop the reply first (Esc), then resend the edited message</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>MarkdownView</name>
    <message>
        <source>Code in {name}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Text of the message; links open in your browser</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>MessageWidget</name>
    <message>
        <source>Copy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy the message to the clipboard</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Edit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Edit this message in place and resend it</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Regenerate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Write this reply again</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Message from {speaker}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Your message</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>Messages</name>
    <message>
        <source>You</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Assistant</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>System</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Interrupted: the runtime stopped</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stopped</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Failed</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>Metrics</name>
    <message>
        <source>This reply</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Speculative decoding</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Memory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Time to first token</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Prompt reading speed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Prompt</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reused / newly read</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Generated</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reply time</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Context used</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>KV cache</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Runtime memory (RAM)</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%Ln token(s)</source>
        <translation type="unfinished">
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>{size} MB</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{seconds} s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{ms} ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{rate} tok/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{percent} %</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{factor}× faster than plain decoding</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>about as fast as plain decoding</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{factor}× the speed of plain decoding</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>prompt lookup</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>draft model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>prompt lookup and draft model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>chosen automatically</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>memory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>disk</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cache</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{tokens} ({source}, {time})</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Restored from cache</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Time saved by the cache</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>restored from cache, saved ≈ {time}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>restored from cache</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Speculation off</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Speed-up</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Drafted by</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{accepted} of {drafted} drafted tokens ({rate})</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Accepted</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Accepted per draft</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{tokens} in {passes} passes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Per model pass</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{mean} tokens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{reused} / {evaluated}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Left out (context full)</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%Ln earlier message(s)</source>
        <translation type="unfinished">
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>{used} of {total} ({percent})</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>GPU memory ({device})</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{used} of {total}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Last reply: complete</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Last reply: reached the token limit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Last reply: stopped</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Last reply: asked to call a tool</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Last reply</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>MetricsPanel</name>
    <message>
        <source>Metrics</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Speed and memory figures of the latest reply, as the runtime measured them</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Decode speed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Decode speed over the last 60 seconds</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>last 60 s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No reply yet</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Streaming…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Waiting for the first token…</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>Sidebar</name>
    <message>
        <source>New chat</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>New chat (Ctrl+N)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Start a new conversation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Filter by title</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Filter conversations</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show only the conversations whose title contains this text</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Conversations</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Newest first. Enter opens one; the context menu key renames, exports or deletes it</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Rename…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export as &amp;Markdown…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export as &amp;JSON…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Delete</source>
        <translation type="unfinished"></translation>
    </message>
</context>
</TS>
