<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en">
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
    <name>Metrics</name>
    <message numerus="yes">
        <source>%Ln token(s)</source>
        <translation>
            <numerusform>%Ln token</numerusform>
            <numerusform>%Ln tokens</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%Ln earlier message(s)</source>
        <translation>
            <numerusform>%Ln earlier message</numerusform>
            <numerusform>%Ln earlier messages</numerusform>
        </translation>
    </message>
</context>
</TS>
