<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en">
<context>
    <name>Attachments</name>
    <message numerus="yes">
        <source>%n page(s)</source>
        <translation>
            <numerusform>%n page</numerusform>
            <numerusform>%n pages</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>Banner</name>
    <message numerus="yes">
        <source>%n message update(s) are kept until they can be saved.</source>
        <translation>
            <numerusform>%n message update are kept until they can be saved.</numerusform>
            <numerusform>%n message updates are kept until they can be saved.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>Catalog</name>
    <message numerus="yes">
        <source>%Ln download(s)</source>
        <translation>
            <numerusform>%Ln download</numerusform>
            <numerusform>%Ln downloads</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>(%n part(s))</source>
        <translation>
            <numerusform>(%n part)</numerusform>
            <numerusform>(%n parts)</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n file(s)</source>
        <translation>
            <numerusform>%n file</numerusform>
            <numerusform>%n files</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>CloseWhileServing</name>
    <message numerus="yes">
        <source>The API is answering %n request(s) right now.</source>
        <translation>
            <numerusform>The API is answering %n request right now.</numerusform>
            <numerusform>The API is answering %n requests right now.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>ImportCommand</name>
    <message numerus="yes">
        <source>%n attached file(s) were not found on this computer and are not attached.</source>
        <translation>
            <numerusform>%n attached file was not found on this computer and is not attached.</numerusform>
            <numerusform>%n attached files were not found on this computer and are not attached.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>KvCacheDialog</name>
    <message numerus="yes">
        <source>Delete the saved caches of %Ln conversation(s), {size}?</source>
        <translation>
            <numerusform>Delete the saved caches of %Ln conversation, {size}?</numerusform>
            <numerusform>Delete the saved caches of %Ln conversations, {size}?</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Removed %Ln file(s), {size} freed.</source>
        <translation>
            <numerusform>Removed %Ln file, {size} freed.</numerusform>
            <numerusform>Removed %Ln files, {size} freed.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>LoadSettingsDialog</name>
    <message numerus="yes">
        <source>Automatic (%n thread(s), one per core)</source>
        <translation>
            <numerusform>Automatic (%n thread, one per core)</numerusform>
            <numerusform>Automatic (%n threads, one per core)</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>Messages</name>
    <message numerus="yes">
        <source>⋯ %Ln more line(s)</source>
        <translation>
            <numerusform>⋯ %Ln more line</numerusform>
            <numerusform>⋯ %Ln more lines</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%Ln line(s)</source>
        <translation>
            <numerusform>%Ln line</numerusform>
            <numerusform>%Ln lines</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>Metrics</name>
    <message numerus="yes">
        <source>%Ln token(s)</source>
        <translation>
            <numerusform>%Ln token</numerusform>
            <numerusform>%Ln tokens</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>{tokens} in %Ln pass(es)</source>
        <translation>
            <numerusform>{tokens} in %Ln pass</numerusform>
            <numerusform>{tokens} in %Ln passes</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%Ln earlier message(s)</source>
        <translation>
            <numerusform>%Ln earlier message</numerusform>
            <numerusform>%Ln earlier messages</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%Ln conversation(s)</source>
        <translation>
            <numerusform>%Ln conversation</numerusform>
            <numerusform>%Ln conversations</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>ModelBrowserDialog</name>
    <message numerus="yes">
        <source>%n model(s) found for “{query}”</source>
        <translation>
            <numerusform>%n model found for “{query}”</numerusform>
            <numerusform>%n models found for “{query}”</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n quantization level(s)</source>
        <translation>
            <numerusform>%n quantization level</numerusform>
            <numerusform>%n quantization levels</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>StatusLine</name>
    <message numerus="yes">
        <source>(%n waiting)</source>
        <translation>
            <numerusform>(%n waiting)</numerusform>
            <numerusform>(%n waiting)</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>UnsavedReplies</name>
    <message numerus="yes">
        <source>%n message(s) could not be saved yet.</source>
        <translation>
            <numerusform>%n message could not be saved yet.</numerusform>
            <numerusform>%n messages could not be saved yet.</numerusform>
        </translation>
    </message>
</context>
</TS>
