<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="id_ID" sourcelanguage="en">
<context>
    <name>Accessibility</name>
    <message>
        <source>Apply the changes and close</source>
        <translation>Terapkan perubahan lalu tutup</translation>
    </message>
    <message>
        <source>Close without changing anything</source>
        <translation>Tutup tanpa mengubah apa pun</translation>
    </message>
    <message>
        <source>Close this window</source>
        <translation>Tutup jendela ini</translation>
    </message>
</context>
<context>
    <name>AddEndpointDialog</name>
    <message>
        <source>Add remote endpoint</source>
        <translation>Tambah endpoint jarak jauh</translation>
    </message>
    <message>
        <source>e.g. GPU cluster</source>
        <translation>mis. Klaster GPU</translation>
    </message>
    <message>
        <source>API key (empty if the server needs none)</source>
        <translation>Kunci API (kosongkan jika server tidak memerlukannya)</translation>
    </message>
    <message>
        <source>The address of an OpenAI-compatible server, such as http://127.0.0.1:8080/v1</source>
        <translation>Alamat server yang kompatibel dengan OpenAI, misalnya http://127.0.0.1:8080/v1</translation>
    </message>
    <message>
        <source>The key the server expects; leave it empty if it needs none</source>
        <translation>Kunci yang diminta server; kosongkan jika tidak diperlukan</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>Nama</translation>
    </message>
    <message>
        <source>Base URL</source>
        <translation>URL dasar</translation>
    </message>
    <message>
        <source>API key</source>
        <translation>Kunci API</translation>
    </message>
    <message>
        <source>Key sent unencrypted</source>
        <translation>Kunci dikirim tanpa enkripsi</translation>
    </message>
    <message>
        <source>{host} is reached over http://, so the API key would cross the network unencrypted.</source>
        <translation>{host} dihubungi lewat http://, jadi kunci API akan melintasi jaringan tanpa enkripsi.</translation>
    </message>
    <message>
        <source>Anyone on the way can read it, and the conversation too. Use https:// if the server offers it.</source>
        <translation>Siapa pun di jalurnya dapat membacanya, begitu pula percakapannya. Gunakan https:// jika server menyediakannya.</translation>
    </message>
    <message>
        <source>Send over http://</source>
        <translation>Kirim lewat http://</translation>
    </message>
</context>
<context>
    <name>Api</name>
    <message>
        <source>The API: {reason}</source>
        <translation>API: {reason}</translation>
    </message>
    <message>
        <source>Serve the API…</source>
        <translation>Layani API…</translation>
    </message>
    <message>
        <source>OpenAI-compatible API</source>
        <translation>API yang kompatibel dengan OpenAI</translation>
    </message>
    <message>
        <source>Load a model first: the API serves the model the window has loaded.</source>
        <translation>Muat model terlebih dahulu: API melayani model yang dimuat oleh jendela ini.</translation>
    </message>
    <message>
        <source>Waiting for the reply the API is generating; yours comes next…</source>
        <translation>Menunggu balasan yang sedang dibuat API; giliran Anda berikutnya…</translation>
    </message>
</context>
<context>
    <name>ApiPanel</name>
    <message>
        <source>Serve the API</source>
        <translation>Layani API</translation>
    </message>
    <message>
        <source>Serve the loaded model to other programs over an OpenAI-compatible API on this machine</source>
        <translation>Sediakan model yang dimuat bagi program lain melalui API yang kompatibel dengan OpenAI di komputer ini</translation>
    </message>
    <message>
        <source>Off</source>
        <translation>Mati</translation>
    </message>
    <message>
        <source>The base URL to give to a client</source>
        <translation>URL dasar yang diberikan kepada klien</translation>
    </message>
    <message>
        <source>The key a client sends as its bearer token</source>
        <translation>Kunci yang dikirim klien sebagai token bearer</translation>
    </message>
    <message>
        <source>URL</source>
        <translation>URL</translation>
    </message>
    <message>
        <source>Key</source>
        <translation>Kunci</translation>
    </message>
    <message>
        <source>Starting…</source>
        <translation>Memulai…</translation>
    </message>
    <message>
        <source>Serving</source>
        <translation>Melayani</translation>
    </message>
</context>
<context>
    <name>ApiServer</name>
    <message>
        <source>could not serve the API: {reason}</source>
        <translation>API tidak dapat dilayani: {reason}</translation>
    </message>
</context>
<context>
    <name>Attachments</name>
    <message>
        <source>&amp;Documents…</source>
        <translation>&amp;Dokumen…</translation>
    </message>
    <message>
        <source>Downloading {name}: large documents are searched by meaning too once it is there</source>
        <translation>Mengunduh {name}: dokumen besar juga dicari berdasarkan makna setelah selesai</translation>
    </message>
    <message>
        <source>{name} is loaded: large documents waiting to be sent, and those attached from now on, are searched by meaning too</source>
        <translation>{name} sudah dimuat: dokumen besar yang menunggu dikirim, dan yang dilampirkan mulai sekarang, juga dicari berdasarkan makna</translation>
    </message>
    <message>
        <source>Search large documents by meaning</source>
        <translation>Cari dokumen besar berdasarkan makna</translation>
    </message>
    <message>
        <source>Download {name} ({params}), an embedding model, so that Lokal also finds the parts that answer your question in other words?</source>
        <translation>Unduh {name} ({params}), sebuah model embedding, agar Lokal juga menemukan bagian yang menjawab pertanyaan Anda dengan kata-kata lain?</translation>
    </message>
    <message>
        <source>Download</source>
        <translation>Unduh</translation>
    </message>
    <message>
        <source>Not now</source>
        <translation>Nanti saja</translation>
    </message>
    <message>
        <source>{name} was not attached: {reason}</source>
        <translation>{name} tidak dilampirkan: {reason}</translation>
    </message>
    <message>
        <source>text, Markdown, source code, CSV, HTML, PDF, DOCX, and pictures (PNG, JPEG, WebP, GIF, BMP)</source>
        <translation>teks, Markdown, kode sumber, CSV, HTML, PDF, DOCX, dan gambar (PNG, JPEG, WebP, GIF, BMP)</translation>
    </message>
    <message>
        <source>it has no extension, so Lokal cannot tell its format. It reads {formats}.</source>
        <translation>berkas ini tidak berekstensi, jadi Lokal tidak dapat mengenali formatnya. Lokal membaca {formats}.</translation>
    </message>
    <message>
        <source>Lokal cannot read {suffix} files. It reads {formats}.</source>
        <translation>Lokal tidak dapat membaca berkas {suffix}. Lokal membaca {formats}.</translation>
    </message>
    <message>
        <source>no model is loaded. Pictures need a model that can see (a vision model with its projector).</source>
        <translation>belum ada model yang dimuat. Gambar memerlukan model yang dapat melihat (model visi dengan proyektornya).</translation>
    </message>
    <message>
        <source>{model} cannot see pictures. Load a vision model (one with a projector, from Model ▸ Browse models) to attach pictures.</source>
        <translation>{model} tidak dapat melihat gambar. Muat model visi (yang memiliki proyektor, dari Model ▸ Jelajahi model) untuk melampirkan gambar.</translation>
    </message>
    <message>
        <source>it is a folder; attach the files in it instead.</source>
        <translation>ini sebuah folder; lampirkan berkas di dalamnya saja.</translation>
    </message>
    <message>
        <source>it cannot be read ({error}).</source>
        <translation>berkas ini tidak dapat dibaca ({error}).</translation>
    </message>
    <message>
        <source>it is {size} MiB; the most Lokal takes is {limit} MiB.</source>
        <translation>ukurannya {size} MiB; Lokal menerima paling banyak {limit} MiB.</translation>
    </message>
    <message>
        <source>the file is empty.</source>
        <translation>berkas ini kosong.</translation>
    </message>
    <message>
        <source>replies come from a remote endpoint ({model}), which Lokal sends text only. Choose a local model to attach files.</source>
        <translation>balasan datang dari endpoint jarak jauh ({model}), yang hanya dikirimi teks oleh Lokal. Pilih model lokal untuk melampirkan berkas.</translation>
    </message>
    <message>
        <source>pasted picture.png</source>
        <translation>gambar tempelan.png</translation>
    </message>
    <message>
        <source>pasted text</source>
        <translation>teks tempelan</translation>
    </message>
    <message>
        <source>it is not a picture Lokal can read (the file is damaged, or not the format its name says).</source>
        <translation>ini bukan gambar yang dapat dibaca Lokal (berkasnya rusak, atau formatnya tidak sesuai namanya).</translation>
    </message>
    <message>
        <source>{name} · making it searchable… {percent}</source>
        <translation>{name} · menyiapkan pencarian… {percent}</translation>
    </message>
    <message>
        <source>{name} · reading…</source>
        <translation>{name} · sedang dibaca…</translation>
    </message>
    <message>
        <source>{name} · picture</source>
        <translation>{name} · gambar</translation>
    </message>
    <message>
        <source>Too large for the context: the embedding model is reading its parts, so that those your question needs can be found</source>
        <translation>Terlalu besar untuk konteks: model embedding sedang membaca bagian-bagiannya, agar bagian yang diperlukan pertanyaan Anda dapat ditemukan</translation>
    </message>
    <message>
        <source>The runtime is reading the file</source>
        <translation>Runtime sedang membaca berkas ini</translation>
    </message>
    <message>
        <source>A picture, seen by the model</source>
        <translation>Gambar, dilihat oleh model</translation>
    </message>
    <message>
        <source>Fits the context: the whole document goes into the prompt</source>
        <translation>Muat dalam konteks: seluruh dokumen masuk ke prompt</translation>
    </message>
    <message>
        <source>Too large for the context: the parts that match your question are put in the prompt, and cited under the reply</source>
        <translation>Terlalu besar untuk konteks: bagian yang sesuai dengan pertanyaan Anda dimasukkan ke prompt, dan dikutip di bawah balasan</translation>
    </message>
    <message numerus="yes">
        <source>%n page(s)</source>
        <translation>
            <numerusform>%n halaman</numerusform>
        </translation>
    </message>
    <message>
        <source>Its size in tokens is known once a model is loaded</source>
        <translation>Ukurannya dalam token diketahui setelah sebuah model dimuat</translation>
    </message>
    <message>
        <source>It is larger than half the context ({budget}), the most a document may take whole.</source>
        <translation>Dokumen ini lebih besar dari setengah konteks ({budget}), batas terbesar bagi dokumen yang dipakai utuh.</translation>
    </message>
    <message>
        <source>The parts are found by the words they share with your question: an embedding model would also find those that say it in other words.</source>
        <translation>Bagian-bagiannya dicari dari kata yang sama dengan pertanyaan Anda: model embedding juga akan menemukan bagian yang mengatakannya dengan kata-kata lain.</translation>
    </message>
    <message>
        <source>{name} is too large for the model&apos;s context ({tokens}): the parts that share the most words with your question go into the prompt.</source>
        <translation>{name} terlalu besar untuk konteks model ({tokens}): bagian yang paling banyak memiliki kata yang sama dengan pertanyaan Anda dimasukkan ke dalam prompt.</translation>
    </message>
    <message>
        <source>pages {first}–{last}</source>
        <translation>halaman {first}–{last}</translation>
    </message>
    <message>
        <source>page {page}</source>
        <translation>halaman {page}</translation>
    </message>
    <message>
        <source>lines {first}–{last}</source>
        <translation>baris {first}–{last}</translation>
    </message>
    <message>
        <source>line {line}</source>
        <translation>baris {line}</translation>
    </message>
</context>
<context>
    <name>AutoHeightBrowser</name>
    <message>
        <source>[image: {address}]</source>
        <translation>[gambar: {address}]</translation>
    </message>
</context>
<context>
    <name>Banner</name>
    <message>
        <source>Message</source>
        <translation>Pesan</translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation>Tutup</translation>
    </message>
    <message>
        <source>Hide this message</source>
        <translation>Sembunyikan pesan ini</translation>
    </message>
    <message>
        <source>Retry</source>
        <translation>Coba lagi</translation>
    </message>
    <message>
        <source>Try to save again</source>
        <translation>Coba simpan lagi</translation>
    </message>
    <message numerus="yes">
        <source>%n message update(s) are kept until they can be saved.</source>
        <translation>
            <numerusform>%n pembaruan pesan disimpan sampai dapat ditulis.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>BranchBar</name>
    <message>
        <source>Previous branch</source>
        <translation>Cabang sebelumnya</translation>
    </message>
    <message>
        <source>Show the version before this one (Alt+Left)</source>
        <translation>Tampilkan versi sebelum yang ini (Alt+Left)</translation>
    </message>
    <message>
        <source>Next branch</source>
        <translation>Cabang berikutnya</translation>
    </message>
    <message>
        <source>Show the version after this one (Alt+Right)</source>
        <translation>Tampilkan versi sesudah yang ini (Alt+Right)</translation>
    </message>
    <message>
        <source>Delete branch</source>
        <translation>Hapus cabang</translation>
    </message>
    <message>
        <source>Delete this version and every reply under it (Edit ▸ Undo delete brings it back)</source>
        <translation>Hapus versi ini beserta setiap balasan di bawahnya (Edit ▸ Urungkan penghapusan mengembalikannya)</translation>
    </message>
    <message>
        <source>Version {n} of {m}</source>
        <translation>Versi {n} dari {m}</translation>
    </message>
</context>
<context>
    <name>BranchCommands</name>
    <message>
        <source>&amp;Previous branch</source>
        <translation>Cabang se&amp;belumnya</translation>
    </message>
    <message>
        <source>&amp;Next branch</source>
        <translation>Cabang ber&amp;ikutnya</translation>
    </message>
    <message>
        <source>&amp;Delete this branch</source>
        <translation>&amp;Hapus cabang ini</translation>
    </message>
</context>
<context>
    <name>Catalog</name>
    <message>
        <source>fits on GPU</source>
        <translation>muat di GPU</translation>
    </message>
    <message>
        <source>fits in RAM</source>
        <translation>muat di RAM</translation>
    </message>
    <message>
        <source>too big</source>
        <translation>terlalu besar</translation>
    </message>
    <message>
        <source>The vision projector {file} ({size}) is counted in</source>
        <translation>Proyektor visi {file} ({size}) ikut dihitung</translation>
    </message>
    <message>
        <source>The draft model {name} is counted in</source>
        <translation>Model draf {name} ikut dihitung</translation>
    </message>
    <message>
        <source>The draft model is not counted in, its size is unknown: {reason}</source>
        <translation>Model draf tidak ikut dihitung, ukurannya tidak diketahui: {reason}</translation>
    </message>
    <message>
        <source>weights {weights} + KV cache {kv} + compute {compute}</source>
        <translation>bobot {weights} + cache KV {kv} + komputasi {compute}</translation>
    </message>
    <message>
        <source>Fits on the GPU: {needed} ({parts}) of {free} free</source>
        <translation>Muat di GPU: {needed} ({parts}) dari {free} yang kosong</translation>
    </message>
    <message>
        <source>Fits in RAM: {needed} ({parts}) of {available} available</source>
        <translation>Muat di RAM: {needed} ({parts}) dari {available} yang tersedia</translation>
    </message>
    <message>
        <source>Too big: it needs {needed} ({parts}), and this machine has {available} of RAM available</source>
        <translation>Terlalu besar: butuh {needed} ({parts}), sedangkan RAM mesin ini yang tersedia {available}</translation>
    </message>
    <message>
        <source>The GPU has {free} free; all layers need {needed} there</source>
        <translation>GPU memiliki {free} yang kosong; semua lapisan butuh {needed} di sana</translation>
    </message>
    <message>
        <source>chat</source>
        <translation>obrolan</translation>
    </message>
    <message>
        <source>reasoning</source>
        <translation>penalaran</translation>
    </message>
    <message>
        <source>coder</source>
        <translation>kode</translation>
    </message>
    <message>
        <source>vision</source>
        <translation>visi</translation>
    </message>
    <message>
        <source>embedding</source>
        <translation>penyematan</translation>
    </message>
    <message>
        <source>Sees pictures: its projector {mmproj} is downloaded with any level.</source>
        <translation>Dapat melihat gambar: proyektornya {mmproj} ikut diunduh dengan level mana pun.</translation>
    </message>
    <message>
        <source>For documents: it turns text into vectors for search, and does not chat.</source>
        <translation>Untuk dokumen: mengubah teks menjadi vektor untuk pencarian, dan tidak mengobrol.</translation>
    </message>
    <message>
        <source>Thinks before it answers.</source>
        <translation>Berpikir sebelum menjawab.</translation>
    </message>
    <message>
        <source>queued</source>
        <translation>dalam antrean</translation>
    </message>
    <message>
        <source>downloading</source>
        <translation>mengunduh</translation>
    </message>
    <message>
        <source>paused</source>
        <translation>dijeda</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>gagal</translation>
    </message>
    <message>
        <source>done</source>
        <translation>selesai</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>dibatalkan</translation>
    </message>
    <message>
        <source>waiting for another download of this file</source>
        <translation>menunggu unduhan lain atas berkas ini</translation>
    </message>
    <message>
        <source>Repository</source>
        <translation>Repositori</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>Ukuran</translation>
    </message>
    <message>
        <source>Draft partner / downloads</source>
        <translation>Pasangan draf / unduhan</translation>
    </message>
    <message>
        <source>Kind</source>
        <translation>Jenis</translation>
    </message>
    <message>
        <source>Draft model for faster replies: {repo}</source>
        <translation>Model draf untuk balasan lebih cepat: {repo}</translation>
    </message>
    <message>
        <source>[gated]</source>
        <translation>[terbatas]</translation>
    </message>
    <message numerus="yes">
        <source>%Ln download(s)</source>
        <translation>
            <numerusform>%Ln unduhan</numerusform>
        </translation>
    </message>
    <message>
        <source>Level</source>
        <translation>Tingkat</translation>
    </message>
    <message>
        <source>Fit</source>
        <translation>Kecocokan</translation>
    </message>
    <message>
        <source>Memory needed</source>
        <translation>Memori yang dibutuhkan</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>Keadaan</translation>
    </message>
    <message numerus="yes">
        <source>(%n part(s))</source>
        <translation>
            <numerusform>(%n bagian)</numerusform>
        </translation>
    </message>
    <message>
        <source>{size} + {projector} projector</source>
        <translation>{size} + proyektor {projector}</translation>
    </message>
    <message>
        <source>downloaded</source>
        <translation>sudah diunduh</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>Model</translation>
    </message>
    <message>
        <source>File</source>
        <translation>Berkas</translation>
    </message>
    <message>
        <source>Progress</source>
        <translation>Kemajuan</translation>
    </message>
    <message>
        <source>Speed</source>
        <translation>Kecepatan</translation>
    </message>
    <message>
        <source>Time left</source>
        <translation>Sisa waktu</translation>
    </message>
    <message>
        <source>State</source>
        <translation>Status</translation>
    </message>
    <message numerus="yes">
        <source>%n file(s)</source>
        <translation>
            <numerusform>%n berkas</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>CatalogService</name>
    <message>
        <source>The catalog</source>
        <translation>Katalog</translation>
    </message>
    <message>
        <source>Search for “{query}”</source>
        <translation>Pencarian “{query}”</translation>
    </message>
    <message>
        <source>Levels of {repo}</source>
        <translation>Tingkat kuantisasi {repo}</translation>
    </message>
    <message>
        <source>Draft check of {repo}</source>
        <translation>Pemeriksaan draf {repo}</translation>
    </message>
    <message>
        <source>Download of {repo}</source>
        <translation>Unduhan {repo}</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>Penjedaan</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>Pelanjutan</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Pembatalan</translation>
    </message>
    <message>
        <source>Downloads</source>
        <translation>Unduhan</translation>
    </message>
</context>
<context>
    <name>CatalogUi</name>
    <message>
        <source>Downloads</source>
        <translation>Unduhan</translation>
    </message>
    <message>
        <source>Pairing the model with its draft</source>
        <translation>Memasangkan model dengan model drafnya</translation>
    </message>
    <message>
        <source>{model} will load with its draft model {draft}</source>
        <translation>{model} akan dimuat bersama model drafnya {draft}</translation>
    </message>
</context>
<context>
    <name>ChatController</name>
    <message>
        <source>New chat</source>
        <translation>Obrolan baru</translation>
    </message>
    <message>
        <source>Stop the reply first (Esc), then resend the edited message</source>
        <translation>Hentikan balasan terlebih dahulu (Esc), lalu kirim ulang pesan yang disunting</translation>
    </message>
    <message>
        <source>Stop the reply first (Esc), then switch or delete a branch</source>
        <translation>Hentikan balasan dulu (Esc), lalu pindah atau hapus cabang</translation>
    </message>
    <message>
        <source>Stop the reply first (Esc), then open another branch of this chat</source>
        <translation>Hentikan balasan dulu (Esc), lalu buka cabang lain dari obrolan ini</translation>
    </message>
</context>
<context>
    <name>ChatView</name>
    <message>
        <source>Conversation</source>
        <translation>Percakapan</translation>
    </message>
    <message>
        <source>The messages of this conversation: Tab moves through them, Page Up and Page Down scroll</source>
        <translation>Pesan-pesan dalam percakapan ini: Tab berpindah di antaranya, Page Up dan Page Down menggulir</translation>
    </message>
    <message>
        <source>Show earlier messages</source>
        <translation>Tampilkan pesan sebelumnya</translation>
    </message>
    <message>
        <source>This conversation is long: it shows its newest messages, and this adds older ones above them</source>
        <translation>Percakapan ini panjang: yang tampil adalah pesan terbarunya, dan tombol ini menambahkan pesan yang lebih lama di atasnya</translation>
    </message>
</context>
<context>
    <name>Chip</name>
    <message>
        <source>Remove {name} from the message</source>
        <translation>Hapus {name} dari pesan</translation>
    </message>
    <message>
        <source>Remove {name}</source>
        <translation>Hapus {name}</translation>
    </message>
    <message>
        <source>The file is not sent with this message (Delete)</source>
        <translation>Berkas ini tidak dikirim bersama pesan ini (Delete)</translation>
    </message>
</context>
<context>
    <name>CitationItem</name>
    <message>
        <source>Source: {title}</source>
        <translation>Sumber: {title}</translation>
    </message>
    <message>
        <source>Shows or hides the text the reply was given from it</source>
        <translation>Menampilkan atau menyembunyikan teks dari sumber ini yang diberikan kepada balasan</translation>
    </message>
</context>
<context>
    <name>Citations</name>
    <message>
        <source>Sources</source>
        <translation>Sumber</translation>
    </message>
</context>
<context>
    <name>CloseWhileServing</name>
    <message>
        <source>Keep serving the API?</source>
        <translation>Tetap melayani API?</translation>
    </message>
    <message numerus="yes">
        <source>The API is answering %n request(s) right now.</source>
        <translation>
            <numerusform>API sedang menjawab %n permintaan saat ini.</numerusform>
        </translation>
    </message>
    <message>
        <source>Quitting stops the API and cuts those replies off. Lokal can keep serving in the background instead.</source>
        <translation>Keluar akan menghentikan API dan memutus balasan-balasan itu. Sebagai gantinya, Lokal dapat tetap melayani di latar belakang.</translation>
    </message>
    <message>
        <source>Lokal is serving the API at {url}.</source>
        <translation>Lokal sedang melayani API di {url}.</translation>
    </message>
    <message>
        <source>this machine</source>
        <translation>komputer ini</translation>
    </message>
    <message>
        <source>Quitting stops the API, and programs that use it lose it. Lokal can keep serving in the background instead.</source>
        <translation>Keluar akan menghentikan API, dan program yang memakainya kehilangan akses. Sebagai gantinya, Lokal dapat tetap melayani di latar belakang.</translation>
    </message>
    <message>
        <source>Keep serving in the background</source>
        <translation>Tetap layani di latar belakang</translation>
    </message>
    <message>
        <source>Stop the API and quit</source>
        <translation>Hentikan API dan keluar</translation>
    </message>
    <message>
        <source>Serving the API in the background</source>
        <translation>Melayani API di latar belakang</translation>
    </message>
    <message>
        <source>Show Lokal</source>
        <translation>Tampilkan Lokal</translation>
    </message>
    <message>
        <source>Lokal is serving the API at {url}</source>
        <translation>Lokal sedang melayani API di {url}</translation>
    </message>
    <message>
        <source>Lokal keeps serving the API</source>
        <translation>Lokal tetap melayani API</translation>
    </message>
    <message>
        <source>Click the Lokal icon to open the window again.</source>
        <translation>Klik ikon Lokal untuk membuka jendelanya lagi.</translation>
    </message>
</context>
<context>
    <name>CodeBlock</name>
    <message>
        <source>Copy</source>
        <translation>Salin</translation>
    </message>
    <message>
        <source>Copy this code</source>
        <translation>Salin kode ini</translation>
    </message>
    <message>
        <source>Copy code</source>
        <translation>Salin kode</translation>
    </message>
    <message>
        <source>Copy this code to the clipboard</source>
        <translation>Salin kode ini ke papan klip</translation>
    </message>
    <message>
        <source>code</source>
        <translation>kode</translation>
    </message>
    <message>
        <source>Code ({language})</source>
        <translation>Kode ({language})</translation>
    </message>
    <message>
        <source>Code</source>
        <translation>Kode</translation>
    </message>
    <message>
        <source>Copied</source>
        <translation>Tersalin</translation>
    </message>
</context>
<context>
    <name>Composer</name>
    <message>
        <source>Attach files or pictures (you can also drop or paste them here)</source>
        <translation>Lampirkan berkas atau gambar (bisa juga dijatuhkan atau ditempel di sini)</translation>
    </message>
    <message>
        <source>Attach</source>
        <translation>Lampirkan</translation>
    </message>
    <message>
        <source>Choose files to send with the message: documents, and pictures when the model can see</source>
        <translation>Pilih berkas untuk dikirim bersama pesan: dokumen, dan gambar bila model dapat melihat</translation>
    </message>
    <message>
        <source>Message the model  (Enter to send, Shift+Enter for a new line)</source>
        <translation>Kirim pesan ke model  (Enter untuk mengirim, Shift+Enter untuk baris baru)</translation>
    </message>
    <message>
        <source>Message the model</source>
        <translation>Kirim pesan ke model</translation>
    </message>
    <message>
        <source>Message</source>
        <translation>Pesan</translation>
    </message>
    <message>
        <source>Enter sends; Shift+Enter starts a new line; Esc stops the reply</source>
        <translation>Enter mengirim; Shift+Enter memulai baris baru; Esc menghentikan balasan</translation>
    </message>
    <message>
        <source>Message size</source>
        <translation>Ukuran pesan</translation>
    </message>
    <message>
        <source>Stop (Esc)</source>
        <translation>Hentikan (Esc)</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>Hentikan</translation>
    </message>
    <message>
        <source>Stop the reply; the text so far is kept</source>
        <translation>Hentikan balasan; teks yang sudah ada tetap disimpan</translation>
    </message>
    <message>
        <source>Send (Enter)</source>
        <translation>Kirim (Enter)</translation>
    </message>
    <message>
        <source>Send</source>
        <translation>Kirim</translation>
    </message>
    <message>
        <source>Send the message</source>
        <translation>Kirim pesan</translation>
    </message>
    <message>
        <source>The pasted text is longer than the model&apos;s context, so it is attached as a file; Ctrl+Shift+V puts it in the message instead</source>
        <translation>Teks yang ditempel lebih panjang dari konteks model, jadi dilampirkan sebagai berkas; Ctrl+Shift+V memasukkannya ke pesan</translation>
    </message>
    <message>
        <source>Attach files</source>
        <translation>Lampirkan berkas</translation>
    </message>
    <message>
        <source>Documents ({patterns})</source>
        <translation>Dokumen ({patterns})</translation>
    </message>
    <message>
        <source>Documents and pictures ({patterns})</source>
        <translation>Dokumen dan gambar ({patterns})</translation>
    </message>
    <message>
        <source>Pictures ({patterns})</source>
        <translation>Gambar ({patterns})</translation>
    </message>
</context>
<context>
    <name>ConversationCommands</name>
    <message>
        <source>Rename chat</source>
        <translation>Ganti nama obrolan</translation>
    </message>
    <message>
        <source>Title:</source>
        <translation>Judul:</translation>
    </message>
    <message>
        <source>Deleted “{title}”. Press Ctrl+Z to undo.</source>
        <translation>“{title}” dihapus. Tekan Ctrl+Z untuk mengurungkan.</translation>
    </message>
    <message>
        <source>Deleted a branch ({count} messages). Press Ctrl+Z to undo.</source>
        <translation>Cabang dihapus ({count} pesan). Tekan Ctrl+Z untuk mengurungkan.</translation>
    </message>
    <message>
        <source>Markdown (*.md)</source>
        <translation>Markdown (*.md)</translation>
    </message>
    <message>
        <source>JSON (*.json)</source>
        <translation>JSON (*.json)</translation>
    </message>
    <message>
        <source>Export chat</source>
        <translation>Ekspor obrolan</translation>
    </message>
    <message>
        <source>Could not export to {path}: {reason}</source>
        <translation>Tidak dapat mengekspor ke {path}: {reason}</translation>
    </message>
    <message>
        <source>Exported to {path}</source>
        <translation>Diekspor ke {path}</translation>
    </message>
</context>
<context>
    <name>ConversationListModel</name>
    <message>
        <source>{title}
last active {time}</source>
        <translation>{title}
terakhir aktif {time}</translation>
    </message>
</context>
<context>
    <name>ConversationSettingsDialog</name>
    <message>
        <source>Conversation settings</source>
        <translation>Pengaturan percakapan</translation>
    </message>
    <message>
        <source>e.g. You are a concise assistant.</source>
        <translation>mis. Anda adalah asisten yang ringkas.</translation>
    </message>
    <message>
        <source>Instructions the model reads before the conversation</source>
        <translation>Instruksi yang dibaca model sebelum percakapan</translation>
    </message>
    <message>
        <source>Leave out tokens less likely than this fraction of the likeliest one (0: off)</source>
        <translation>Abaikan token yang peluangnya kurang dari pecahan ini dari token paling mungkin (0: mati)</translation>
    </message>
    <message>
        <source>Make tokens used in the last 64 less likely (1: off)</source>
        <translation>Kurangi peluang token yang dipakai dalam 64 token terakhir (1: mati)</translation>
    </message>
    <message>
        <source>Until the model stops</source>
        <translation>Sampai model berhenti</translation>
    </message>
    <message>
        <source>A reply cut by this limit, or by a full context, can be continued</source>
        <translation>Balasan yang terpotong oleh batas ini, atau oleh konteks yang penuh, dapat dilanjutkan</translation>
    </message>
    <message>
        <source>The model&apos;s default</source>
        <translation>Bawaan model</translation>
    </message>
    <message>
        <source>On</source>
        <translation>Aktif</translation>
    </message>
    <message>
        <source>Whether a model that can think before it answers does so (models that cannot ignore it)</source>
        <translation>Apakah model yang dapat berpikir sebelum menjawab melakukannya (model yang tidak bisa mengabaikannya)</translation>
    </message>
    <message>
        <source>Thinking</source>
        <translation>Berpikir</translation>
    </message>
    <message>
        <source>No limit</source>
        <translation>Tanpa batas</translation>
    </message>
    <message>
        <source> tokens</source>
        <translation> token</translation>
    </message>
    <message>
        <source>After this many thinking tokens the model stops thinking and answers</source>
        <translation>Setelah token berpikir sebanyak ini, model berhenti berpikir dan menjawab</translation>
    </message>
    <message>
        <source>The model&apos;s setting</source>
        <translation>Pengaturan model</translation>
    </message>
    <message>
        <source>Changing it reloads the model with the new context size</source>
        <translation>Mengubahnya akan memuat ulang model dengan ukuran konteks yang baru</translation>
    </message>
    <message>
        <source>Auto</source>
        <translation>Otomatis</translation>
    </message>
    <message>
        <source>Prompt lookup</source>
        <translation>Pencarian di prompt</translation>
    </message>
    <message>
        <source>Draft model</source>
        <translation>Model draf</translation>
    </message>
    <message>
        <source>Prompt lookup and draft model</source>
        <translation>Pencarian di prompt dan model draf</translation>
    </message>
    <message>
        <source>The longest a reply may get; by default it runs until the model stops, within the context</source>
        <translation>Panjang maksimum sebuah balasan; secara bawaan balasan berjalan sampai model berhenti, di dalam konteks</translation>
    </message>
    <message>
        <source>Thinking budget</source>
        <translation>Batas berpikir</translation>
    </message>
    <message>
        <source>Off</source>
        <translation>Mati</translation>
    </message>
    <message>
        <source>Speculative decoding for this conversation&apos;s replies; the draft modes need a draft model loaded</source>
        <translation>Dekode spekulatif untuk balasan percakapan ini; mode draf memerlukan model draf yang dimuat</translation>
    </message>
    <message>
        <source>Speculative decoding</source>
        <translation>Dekode spekulatif</translation>
    </message>
    <message>
        <source>0 always picks the likeliest word; higher values vary more</source>
        <translation>0 selalu memilih kata yang paling mungkin; nilai lebih tinggi lebih beragam</translation>
    </message>
    <message>
        <source>Pick only among the likeliest words that together make up this share</source>
        <translation>Pilih hanya di antara kata-kata paling mungkin yang bersama-sama mencapai porsi ini</translation>
    </message>
    <message>
        <source>System prompt</source>
        <translation>Prompt sistem</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>Temperatur</translation>
    </message>
    <message>
        <source>Top p</source>
        <translation>Top p</translation>
    </message>
    <message>
        <source>Min p</source>
        <translation>Min p</translation>
    </message>
    <message>
        <source>Repeat penalty</source>
        <translation>Penalti pengulangan</translation>
    </message>
    <message>
        <source>Max tokens per reply</source>
        <translation>Token maksimum per balasan</translation>
    </message>
    <message>
        <source>Context size (tokens)</source>
        <translation>Ukuran konteks (token)</translation>
    </message>
</context>
<context>
    <name>DocumentsDialog</name>
    <message>
        <source>Documents</source>
        <translation>Dokumen</translation>
    </message>
    <message>
        <source>Documents you attached before. Attaching one again reuses what was read and indexed: nothing is read again.</source>
        <translation>Dokumen yang pernah Anda lampirkan. Melampirkannya lagi memakai ulang hasil baca dan indeksnya: tidak ada yang dibaca ulang.</translation>
    </message>
    <message>
        <source>No documents yet: attach one to a message (the paperclip, or drop a file on the message box).</source>
        <translation>Belum ada dokumen: lampirkan satu ke pesan (klip kertas, atau jatuhkan berkas ke kotak pesan).</translation>
    </message>
    <message>
        <source>Choose documents, then Attach (Enter)</source>
        <translation>Pilih dokumen, lalu Lampirkan (Enter)</translation>
    </message>
    <message>
        <source>Attach</source>
        <translation>Lampirkan</translation>
    </message>
    <message>
        <source>Put the chosen documents on the message you are writing</source>
        <translation>Tambahkan dokumen yang dipilih ke pesan yang sedang Anda tulis</translation>
    </message>
</context>
<context>
    <name>DownloadsPanel</name>
    <message>
        <source>Pause</source>
        <translation>Jeda</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>Lanjutkan</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Batalkan</translation>
    </message>
    <message>
        <source>Pause the chosen download; it resumes where it stopped</source>
        <translation>Jeda unduhan terpilih; nanti dilanjutkan dari titik berhentinya</translation>
    </message>
    <message>
        <source>Resume the chosen download</source>
        <translation>Lanjutkan unduhan terpilih</translation>
    </message>
    <message>
        <source>Cancel the chosen download and delete what it fetched</source>
        <translation>Batalkan unduhan terpilih dan hapus yang sudah diambil</translation>
    </message>
    <message>
        <source>Downloads</source>
        <translation>Unduhan</translation>
    </message>
    <message>
        <source>One row per download: model, file, progress, speed, time left and state</source>
        <translation>Satu baris per unduhan: model, berkas, kemajuan, kecepatan, sisa waktu, dan status</translation>
    </message>
    <message>
        <source>No downloads. Model ▸ Browse Hugging Face models… fetches a model; a download paused or cut off by a restart shows here, to resume.</source>
        <translation>Tidak ada unduhan. Model ▸ Jelajahi model Hugging Face… mengambil sebuah model; unduhan yang dijeda atau terputus karena mulai ulang muncul di sini, untuk dilanjutkan.</translation>
    </message>
</context>
<context>
    <name>EmbeddingModel</name>
    <message>
        <source>The download of {name} did not start: {reason}</source>
        <translation>Unduhan {name} tidak dimulai: {reason}</translation>
    </message>
    <message>
        <source>The download of {repo} has no GGUF file to load</source>
        <translation>Unduhan {repo} tidak berisi berkas GGUF untuk dimuat</translation>
    </message>
    <message>
        <source>The embedding model {file} could not be loaded: {reason}</source>
        <translation>Model embedding {file} tidak dapat dimuat: {reason}</translation>
    </message>
</context>
<context>
    <name>Endpoints</name>
    <message>
        <source>enter the server&apos;s address, such as http://127.0.0.1:8080/v1</source>
        <translation>masukkan alamat server, misalnya http://127.0.0.1:8080/v1</translation>
    </message>
    <message>
        <source>not an http(s) address: {url}</source>
        <translation>bukan alamat http(s): {url}</translation>
    </message>
    <message>
        <source>bad port in {url}</source>
        <translation>port tidak valid pada {url}</translation>
    </message>
</context>
<context>
    <name>Errors</name>
    <message>
        <source>The model needs about {needed} of GPU memory with these settings, and {available} is free: offload fewer layers or choose a smaller context.</source>
        <translation>Model ini butuh sekitar {needed} memori GPU dengan pengaturan ini, dan yang kosong {available}: pindahkan lebih sedikit lapisan ke GPU atau pilih konteks yang lebih kecil.</translation>
    </message>
    <message>
        <source>The model needs about {needed} of memory with these settings, and {available} is available: choose a smaller quantization or context.</source>
        <translation>Model ini butuh sekitar {needed} memori dengan pengaturan ini, dan yang tersedia {available}: pilih kuantisasi atau konteks yang lebih kecil.</translation>
    </message>
    <message>
        <source>The disk is full.</source>
        <translation>Disk penuh.</translation>
    </message>
    <message>
        <source>Not enough disk space: {needed} more is needed, and {free} is free.</source>
        <translation>Ruang disk tidak cukup: masih butuh {needed} lagi, dan yang kosong {free}.</translation>
    </message>
    <message>
        <source>Lokal leaves {floor} of it free for everything else.</source>
        <translation>Lokal menyisakan {floor} darinya untuk keperluan lain.</translation>
    </message>
    <message>
        <source>Hugging Face cannot be reached: check the network connection.</source>
        <translation>Hugging Face tidak dapat dihubungi: periksa koneksi jaringan.</translation>
    </message>
    <message>
        <source>{repo} is a gated repository: accept its terms on the model page, then log in with `{login}` (or set HF_TOKEN).</source>
        <translation>{repo} adalah repositori berpagar: setujui ketentuannya di halaman model, lalu masuk dengan `{login}` (atau atur HF_TOKEN).</translation>
    </message>
    <message>
        <source>{repo} needs a Hugging Face token: log in with `{login}` (or set HF_TOKEN).</source>
        <translation>{repo} memerlukan token Hugging Face: masuk dengan `{login}` (atau atur HF_TOKEN).</translation>
    </message>
    <message>
        <source>{repo} is a gated repository and your token has no access yet: accept its terms on the model page first.</source>
        <translation>{repo} adalah repositori berpagar dan token Anda belum punya akses: setujui dulu ketentuannya di halaman model.</translation>
    </message>
    <message>
        <source>Your Hugging Face token has no access to {repo}.</source>
        <translation>Token Hugging Face Anda tidak punya akses ke {repo}.</translation>
    </message>
    <message>
        <source>No repository {repo} on Hugging Face.</source>
        <translation>Tidak ada repositori {repo} di Hugging Face.</translation>
    </message>
    <message>
        <source>No repository {repo} on Hugging Face; if it is private, log in with `{login}` (or set HF_TOKEN).</source>
        <translation>Tidak ada repositori {repo} di Hugging Face; jika repositori itu privat, masuk dengan `{login}` (atau atur HF_TOKEN).</translation>
    </message>
</context>
<context>
    <name>Export</name>
    <message>
        <source>Exported from Lokal on {time}</source>
        <translation>Diekspor dari Lokal pada {time}</translation>
    </message>
    <message>
        <source>System prompt:</source>
        <translation>Prompt sistem:</translation>
    </message>
    <message>
        <source>Attached:</source>
        <translation>Lampiran:</translation>
    </message>
    <message>
        <source>Sources:</source>
        <translation>Sumber:</translation>
    </message>
</context>
<context>
    <name>HelpMenu</name>
    <message>
        <source>&amp;Keyboard shortcuts</source>
        <translation>&amp;Pintasan papan ketik</translation>
    </message>
    <message>
        <source>Open &amp;log folder</source>
        <translation>Buka folder &amp;log</translation>
    </message>
    <message>
        <source>&amp;About Lokal</source>
        <translation>&amp;Tentang Lokal</translation>
    </message>
    <message>
        <source>Device: {name} ({kind}, {gib} GiB)</source>
        <translation>Perangkat: {name} ({kind}, {gib} GiB)</translation>
    </message>
    <message>
        <source>Backend: {backend}</source>
        <translation>Backend: {backend}</translation>
    </message>
    <message>
        <source>The runtime is not running.</source>
        <translation>Runtime tidak berjalan.</translation>
    </message>
    <message>
        <source>About Lokal</source>
        <translation>Tentang Lokal</translation>
    </message>
    <message>
        <source>Chat with language models that run on this machine.</source>
        <translation>Mengobrol dengan model bahasa yang berjalan di komputer ini.</translation>
    </message>
    <message>
        <source>Protocol {version}</source>
        <translation>Protokol {version}</translation>
    </message>
    <message>
        <source>Logs: {folder}</source>
        <translation>Log: {folder}</translation>
    </message>
</context>
<context>
    <name>ImageViewer</name>
    <message>
        <source>This picture cannot be shown (its stored copy is damaged).</source>
        <translation>Gambar ini tidak dapat ditampilkan (salinan tersimpannya rusak).</translation>
    </message>
    <message>
        <source>Picture {name}</source>
        <translation>Gambar {name}</translation>
    </message>
    <message>
        <source>The picture at full size; Esc closes it</source>
        <translation>Gambar dalam ukuran penuh; Esc menutupnya</translation>
    </message>
</context>
<context>
    <name>ImportCommand</name>
    <message>
        <source>&amp;Import conversations…</source>
        <translation>&amp;Impor percakapan…</translation>
    </message>
    <message>
        <source>Import conversations</source>
        <translation>Impor percakapan</translation>
    </message>
    <message>
        <source>Conversation exports (*.json);;All files (*)</source>
        <translation>Ekspor percakapan (*.json);;Semua berkas (*)</translation>
    </message>
    <message>
        <source>Could not start the import: {reason}</source>
        <translation>Impor tidak dapat dimulai: {reason}</translation>
    </message>
    <message>
        <source>the import of {file} stopped (code {code}): {reason}</source>
        <translation>impor {file} berhenti (kode {code}): {reason}</translation>
    </message>
    <message>
        <source>it gave no reason</source>
        <translation>tanpa alasan</translation>
    </message>
    <message>
        <source>The import of {file} was cancelled: nothing was imported.</source>
        <translation>Impor {file} dibatalkan: tidak ada yang diimpor.</translation>
    </message>
    <message>
        <source>Nothing was imported: {reason}</source>
        <translation>Tidak ada yang diimpor: {reason}</translation>
    </message>
    <message>
        <source>Imported {added} conversations ({messages} messages) from {format}.</source>
        <translation>{added} percakapan ({messages} pesan) diimpor dari {format}.</translation>
    </message>
    <message>
        <source>{skipped} were imported before and were skipped.</source>
        <translation>{skipped} sudah pernah diimpor dan dilewati.</translation>
    </message>
    <message numerus="yes">
        <source>%n attached file(s) were not found on this computer and are not attached.</source>
        <translation>
            <numerusform>%n berkas lampiran tidak ditemukan di komputer ini dan tidak dilampirkan.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>ImportProgress</name>
    <message>
        <source>Cancel</source>
        <translation>Batal</translation>
    </message>
    <message>
        <source>Stop the import: nothing of the file is kept</source>
        <translation>Hentikan impor: tidak ada isi berkas yang disimpan</translation>
    </message>
    <message>
        <source>Reading {file}…</source>
        <translation>Membaca {file}…</translation>
    </message>
    <message>
        <source>Importing {file}: {done} of {total} conversations</source>
        <translation>Mengimpor {file}: {done} dari {total} percakapan</translation>
    </message>
    <message>
        <source>Cancelling the import…</source>
        <translation>Membatalkan impor…</translation>
    </message>
</context>
<context>
    <name>InlineEditor</name>
    <message>
        <source>Edit your message</source>
        <translation>Sunting pesan Anda</translation>
    </message>
    <message>
        <source>Enter resends it as a new branch (the message as it was and its replies stay, ◀ ▶); Shift+Enter starts a new line; Esc cancels</source>
        <translation>Enter mengirimnya ulang sebagai cabang baru (pesan semula dan balasannya tetap ada, ◀ ▶); Shift+Enter memulai baris baru; Esc membatalkan</translation>
    </message>
    <message>
        <source>Enter to resend · Shift+Enter for a new line · Esc to cancel</source>
        <translation>Enter untuk mengirim ulang · Shift+Enter untuk baris baru · Esc untuk membatalkan</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Batal</translation>
    </message>
    <message>
        <source>Keep the message as it was</source>
        <translation>Biarkan pesan seperti semula</translation>
    </message>
    <message>
        <source>Resend</source>
        <translation>Kirim ulang</translation>
    </message>
    <message>
        <source>Send the edited message as a new branch; the message as it was stays (◀ ▶)</source>
        <translation>Kirim pesan yang disunting sebagai cabang baru; pesan semula tetap ada (◀ ▶)</translation>
    </message>
</context>
<context>
    <name>KeyStorageQuestion</name>
    <message>
        <source>API key not in the keyring</source>
        <translation>Kunci API tidak ada di keyring</translation>
    </message>
    <message>
        <source>The key for {name} could not be stored in the system keyring: {problem}.</source>
        <translation>Kunci untuk {name} tidak dapat disimpan di keyring sistem: {problem}.</translation>
    </message>
    <message>
        <source>Store it in {file}, a file only you can read (mode 0600)? If not, Lokal uses it until it quits and keeps it nowhere.</source>
        <translation>Simpan di {file}, berkas yang hanya dapat Anda baca (mode 0600)? Jika tidak, Lokal memakainya sampai ditutup dan tidak menyimpannya di mana pun.</translation>
    </message>
    <message>
        <source>Store in the file</source>
        <translation>Simpan di berkas</translation>
    </message>
    <message>
        <source>Don&apos;t store it</source>
        <translation>Jangan simpan</translation>
    </message>
</context>
<context>
    <name>KvCache</name>
    <message>
        <source>Status</source>
        <translation>Status</translation>
    </message>
    <message>
        <source>off (LOKAL_KV_STORE=off): conversations are not saved</source>
        <translation>mati (LOKAL_KV_STORE=off): percakapan tidak disimpan</translation>
    </message>
    <message>
        <source>Conversations saved</source>
        <translation>Percakapan tersimpan</translation>
    </message>
    <message>
        <source>On disk</source>
        <translation>Di disk</translation>
    </message>
    <message>
        <source>{used} of {budget}</source>
        <translation>{used} dari {budget}</translation>
    </message>
    <message>
        <source>In memory</source>
        <translation>Di memori</translation>
    </message>
    <message>
        <source>Folder</source>
        <translation>Folder</translation>
    </message>
    <message>
        <source>Saved conversation &amp;caches…</source>
        <translation>&amp;Cache percakapan tersimpan…</translation>
    </message>
</context>
<context>
    <name>KvCacheDialog</name>
    <message>
        <source>Saved conversation caches</source>
        <translation>Cache percakapan tersimpan</translation>
    </message>
    <message>
        <source>After each reply Lokal saves the conversation&apos;s KV cache, so reopening it later, even after a restart, starts answering at once instead of reading the whole conversation again.</source>
        <translation>Setelah setiap balasan, Lokal menyimpan cache KV percakapan, sehingga saat dibuka lagi nanti, bahkan setelah dimulai ulang, Lokal langsung menjawab tanpa membaca ulang seluruh percakapan.</translation>
    </message>
    <message>
        <source>Clear all…</source>
        <translation>Hapus semua…</translation>
    </message>
    <message>
        <source>Delete every saved conversation cache; the conversations stay</source>
        <translation>Hapus setiap cache percakapan yang tersimpan; percakapannya tetap ada</translation>
    </message>
    <message>
        <source>Asking the runtime…</source>
        <translation>Menanyakan ke runtime…</translation>
    </message>
    <message>
        <source>Could not read the cache store: {reason}</source>
        <translation>Penyimpanan cache tidak dapat dibaca: {reason}</translation>
    </message>
    <message>
        <source>Clear saved caches?</source>
        <translation>Hapus cache tersimpan?</translation>
    </message>
    <message numerus="yes">
        <source>Delete the saved caches of %Ln conversation(s), {size}?</source>
        <translation>
            <numerusform>Hapus cache tersimpan dari %Ln percakapan, {size}?</numerusform>
        </translation>
    </message>
    <message>
        <source>The conversations themselves are kept; their next reply reads them again from the start.</source>
        <translation>Percakapannya sendiri tetap disimpan; balasan berikutnya akan membacanya lagi dari awal.</translation>
    </message>
    <message>
        <source>Clearing…</source>
        <translation>Menghapus…</translation>
    </message>
    <message numerus="yes">
        <source>Removed %Ln file(s), {size} freed.</source>
        <translation>
            <numerusform>%Ln berkas dihapus, {size} dibebaskan.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>LanguageMenu</name>
    <message>
        <source>&amp;System language ({name})</source>
        <translation>Bahasa &amp;sistem ({name})</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>Bahasa</translation>
    </message>
    <message>
        <source>Lokal will be in {language} the next time its window opens.</source>
        <translation>Lokal akan memakai {language} saat jendelanya dibuka berikutnya.</translation>
    </message>
    <message>
        <source>Open it again now? The model is loaded again; your conversations stay as they are.</source>
        <translation>Buka lagi sekarang? Model akan dimuat ulang; percakapan Anda tetap seperti semula.</translation>
    </message>
    <message>
        <source>Open again now</source>
        <translation>Buka lagi sekarang</translation>
    </message>
    <message>
        <source>Later</source>
        <translation>Nanti</translation>
    </message>
</context>
<context>
    <name>Links</name>
    <message>
        <source>Not opened: {url}
Only http, https and mailto links in a reply open.</source>
        <translation>Tidak dibuka: {url}
Hanya tautan http, https, dan mailto dalam balasan yang dibuka.</translation>
    </message>
</context>
<context>
    <name>LoadSettingsDialog</name>
    <message>
        <source>Load settings of {file}</source>
        <translation>Pengaturan muat {file}</translation>
    </message>
    <message>
        <source>Used wherever this model file is loaded: the window, lokal chat and lokal serve.</source>
        <translation>Dipakai di mana pun berkas model ini dimuat: jendela, lokal chat, dan lokal serve.</translation>
    </message>
    <message>
        <source>Auto (as many layers as fit)</source>
        <translation>Otomatis (sebanyak lapisan yang muat)</translation>
    </message>
    <message>
        <source>All layers</source>
        <translation>Semua lapisan</translation>
    </message>
    <message>
        <source>Off (CPU only)</source>
        <translation>Mati (hanya CPU)</translation>
    </message>
    <message>
        <source>A number of layers</source>
        <translation>Sejumlah lapisan</translation>
    </message>
    <message>
        <source>This build runs on the CPU</source>
        <translation>Build ini berjalan di CPU</translation>
    </message>
    <message>
        <source>Automatic ({n} tokens)</source>
        <translation>Otomatis ({n} token)</translation>
    </message>
    <message>
        <source>Automatic</source>
        <translation>Otomatis</translation>
    </message>
    <message>
        <source>Automatic: the context the model was trained for, as far as memory allows</source>
        <translation>Otomatis: konteks yang dipakai saat model dilatih, sejauh memori memungkinkan</translation>
    </message>
    <message>
        <source>q8_0 halves the KV cache&apos;s memory, q4_0 quarters it, at some cost in quality</source>
        <translation>q8_0 memangkas memori cache KV menjadi setengah, q4_0 menjadi seperempat, dengan sedikit penurunan kualitas</translation>
    </message>
    <message>
        <source>Auto (the smallest compatible model on disk)</source>
        <translation>Otomatis (model kompatibel terkecil di disk)</translation>
    </message>
    <message>
        <source>None</source>
        <translation>Tidak ada</translation>
    </message>
    <message>
        <source>Auto</source>
        <translation>Otomatis</translation>
    </message>
    <message>
        <source>Prompt lookup</source>
        <translation>Pencarian di prompt</translation>
    </message>
    <message>
        <source>Draft model</source>
        <translation>Model draf</translation>
    </message>
    <message>
        <source>Prompt lookup and draft model</source>
        <translation>Pencarian di prompt dan model draf</translation>
    </message>
    <message>
        <source>Off</source>
        <translation>Mati</translation>
    </message>
    <message>
        <source>This model was trained for {n} tokens: a longer context is not offered, as its replies fall apart past it.</source>
        <translation>Model ini dilatih untuk {n} token: konteks yang lebih panjang tidak ditawarkan, karena balasannya kacau setelah itu.</translation>
    </message>
    <message>
        <source>On</source>
        <translation>Aktif</translation>
    </message>
    <message>
        <source>Auto: llama.cpp&apos;s choice, on. Off decodes faster on a CPU, but a conversation restored from the KV store may then go on a little differently</source>
        <translation>Otomatis: pilihan llama.cpp, aktif. Mati mendekode lebih cepat di CPU, tetapi percakapan yang dipulihkan dari penyimpanan KV bisa berlanjut sedikit berbeda</translation>
    </message>
    <message>
        <source>Conversations that can write replies at the same time. Each keeps a context of its own in memory, so fewer leave more memory to the rest of the machine</source>
        <translation>Percakapan yang dapat menulis balasan bersamaan. Masing-masing menyimpan konteksnya sendiri di memori, jadi lebih sedikit menyisakan lebih banyak memori untuk bagian lain mesin</translation>
    </message>
    <message numerus="yes">
        <source>Automatic (%n thread(s), one per core)</source>
        <translation>
            <numerusform>Otomatis (%n thread, satu per inti)</numerusform>
        </translation>
    </message>
    <message>
        <source>More threads than cores slow replies down: at every layer, the threads wait for each other</source>
        <translation>Thread yang lebih banyak daripada inti memperlambat balasan: di setiap lapisan, thread saling menunggu</translation>
    </message>
    <message>
        <source>Whole layers on each device</source>
        <translation>Lapisan utuh di setiap perangkat</translation>
    </message>
    <message>
        <source>Rows of each layer across devices</source>
        <translation>Baris setiap lapisan dibagi ke semua perangkat</translation>
    </message>
    <message>
        <source>One device only (the main one)</source>
        <translation>Satu perangkat saja (yang utama)</translation>
    </message>
    <message>
        <source>{index}: not on this machine</source>
        <translation>{index}: tidak ada di mesin ini</translation>
    </message>
    <message>
        <source>Splitting a model across GPU devices needs more than one; this machine has {n}.</source>
        <translation>Membagi model ke beberapa perangkat GPU memerlukan lebih dari satu; mesin ini punya {n}.</translation>
    </message>
    <message>
        <source>GPU offload</source>
        <translation>Offload ke GPU</translation>
    </message>
    <message>
        <source>Across GPU devices</source>
        <translation>Di beberapa perangkat GPU</translation>
    </message>
    <message>
        <source>Main GPU device</source>
        <translation>Perangkat GPU utama</translation>
    </message>
    <message>
        <source>Context length (tokens)</source>
        <translation>Panjang konteks (token)</translation>
    </message>
    <message>
        <source>KV cache type</source>
        <translation>Jenis cache KV</translation>
    </message>
    <message>
        <source>Flash attention</source>
        <translation>Atensi flash</translation>
    </message>
    <message>
        <source>Speculative decoding</source>
        <translation>Dekode spekulatif</translation>
    </message>
    <message>
        <source>Parallel replies</source>
        <translation>Balasan paralel</translation>
    </message>
    <message>
        <source>CPU threads</source>
        <translation>Thread CPU</translation>
    </message>
    <message>
        <source>Context length</source>
        <translation>Panjang konteks</translation>
    </message>
    <message>
        <source>A quantized KV cache needs flash attention: make the KV cache type f16 first</source>
        <translation>Cache KV terkuantisasi memerlukan flash attention: ubah dulu jenis cache KV menjadi f16</translation>
    </message>
    <message>
        <source>A quantized KV cache needs flash attention: make it Auto or On first</source>
        <translation>Cache KV terkuantisasi memerlukan flash attention: ubah dulu menjadi Otomatis atau Aktif</translation>
    </message>
</context>
<context>
    <name>LocalModelSections</name>
    <message>
        <source>Cannot add {file}: {reason}</source>
        <translation>Tidak dapat menambahkan {file}: {reason}</translation>
    </message>
    <message>
        <source>Could not use the load settings of {file}: {reason}</source>
        <translation>Pengaturan muat {file} tidak dapat dipakai: {reason}</translation>
    </message>
    <message>
        <source>the model</source>
        <translation>model ini</translation>
    </message>
    <message>
        <source>This conversation&apos;s context size ({wanted} tokens) does not fit in this machine&apos;s memory: the model is loaded with {fits} tokens instead. Change it in Conversation settings.</source>
        <translation>Ukuran konteks percakapan ini ({wanted} token) tidak muat di memori mesin ini: model dimuat dengan {fits} token sebagai gantinya. Ubah di Pengaturan percakapan.</translation>
    </message>
    <message>
        <source>The model was trained for a context of {trained} tokens, and its replies fall apart past that: it is loaded with {trained} tokens, not the {asked} asked for.</source>
        <translation>Model ini dilatih untuk konteks {trained} token, dan balasannya kacau setelah itu: model dimuat dengan {trained} token, bukan {asked} yang diminta.</translation>
    </message>
    <message>
        <source>No GGUF files found yet</source>
        <translation>Belum ada berkas GGUF yang ditemukan</translation>
    </message>
    <message>
        <source>&amp;Draft model</source>
        <translation>Model &amp;draf</translation>
    </message>
    <message>
        <source>none on disk</source>
        <translation>tidak ada di disk</translation>
    </message>
    <message>
        <source>Auto ({name})</source>
        <translation>Otomatis ({name})</translation>
    </message>
    <message>
        <source>None</source>
        <translation>Tidak ada</translation>
    </message>
    <message>
        <source>{file} (cannot draft for this model)</source>
        <translation>{file} (tidak dapat menjadi draf untuk model ini)</translation>
    </message>
    <message>
        <source>&amp;Load settings…</source>
        <translation>Pengaturan &amp;muat…</translation>
    </message>
    <message>
        <source>Browse Hugging Face models…</source>
        <translation>Jelajahi model Hugging Face…</translation>
    </message>
    <message>
        <source>Downloads</source>
        <translation>Unduhan</translation>
    </message>
    <message>
        <source>Open a GGUF file…</source>
        <translation>Buka berkas GGUF…</translation>
    </message>
    <message>
        <source>Rescan model folders</source>
        <translation>Pindai ulang folder model</translation>
    </message>
    <message>
        <source>Open a model</source>
        <translation>Buka model</translation>
    </message>
    <message>
        <source>GGUF models (*.gguf);;All files (*)</source>
        <translation>Model GGUF (*.gguf);;Semua berkas (*)</translation>
    </message>
    <message>
        <source>Could not store the load settings: {reason}</source>
        <translation>Pengaturan muat tidak dapat disimpan: {reason}</translation>
    </message>
    <message>
        <source>Reload the model?</source>
        <translation>Muat ulang model?</translation>
    </message>
    <message>
        <source>These settings take effect when the model is loaded again. Reload it now?</source>
        <translation>Pengaturan ini berlaku saat model dimuat ulang. Muat ulang sekarang?</translation>
    </message>
    <message>
        <source>Replies being written now finish first; none is cut off.</source>
        <translation>Balasan yang sedang ditulis diselesaikan dulu; tidak ada yang terpotong.</translation>
    </message>
    <message>
        <source>Reload now</source>
        <translation>Muat ulang sekarang</translation>
    </message>
    <message>
        <source>Later</source>
        <translation>Nanti</translation>
    </message>
</context>
<context>
    <name>LocalModels</name>
    <message>
        <source>Where it lives: {path}</source>
        <translation>Lokasinya: {path}</translation>
    </message>
    <message>
        <source>Also at: {path}</source>
        <translation>Juga di: {path}</translation>
    </message>
</context>
<context>
    <name>LongMessage</name>
    <message>
        <source>{name}, its first lines</source>
        <translation>{name}, baris-baris pertamanya</translation>
    </message>
    <message>
        <source>{name}, its last lines</source>
        <translation>{name}, baris-baris terakhirnya</translation>
    </message>
    <message>
        <source>{name}, whole</source>
        <translation>{name}, utuh</translation>
    </message>
    <message>
        <source>Show less</source>
        <translation>Tampilkan lebih sedikit</translation>
    </message>
    <message>
        <source>Show only the first and last lines of this message</source>
        <translation>Tampilkan hanya baris pertama dan terakhir pesan ini</translation>
    </message>
    <message>
        <source>Show all</source>
        <translation>Tampilkan semua</translation>
    </message>
    <message>
        <source>Show the whole message in a box that scrolls</source>
        <translation>Tampilkan seluruh pesan dalam kotak yang dapat digulir</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>New chat</source>
        <translation>Obrolan baru</translation>
    </message>
    <message>
        <source>&amp;Model</source>
        <translation>&amp;Model</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>&amp;Berkas</translation>
    </message>
    <message>
        <source>&amp;New chat</source>
        <translation>Obrolan &amp;baru</translation>
    </message>
    <message>
        <source>Export as &amp;Markdown…</source>
        <translation>Ekspor sebagai &amp;Markdown…</translation>
    </message>
    <message>
        <source>Export as &amp;JSON…</source>
        <translation>Ekspor sebagai &amp;JSON…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>&amp;Keluar</translation>
    </message>
    <message>
        <source>&amp;Edit</source>
        <translation>&amp;Sunting</translation>
    </message>
    <message>
        <source>&amp;Undo delete</source>
        <translation>&amp;Urungkan penghapusan</translation>
    </message>
    <message>
        <source>&amp;Rename chat…</source>
        <translation>&amp;Ganti nama obrolan…</translation>
    </message>
    <message>
        <source>&amp;Delete chat</source>
        <translation>&amp;Hapus obrolan</translation>
    </message>
    <message>
        <source>Conversation &amp;settings…</source>
        <translation>&amp;Pengaturan percakapan…</translation>
    </message>
    <message>
        <source>&amp;Chat</source>
        <translation>&amp;Obrolan</translation>
    </message>
    <message>
        <source>&amp;Stop</source>
        <translation>&amp;Hentikan</translation>
    </message>
    <message>
        <source>&amp;Regenerate last reply</source>
        <translation>&amp;Buat ulang balasan terakhir</translation>
    </message>
    <message>
        <source>&amp;Edit last message</source>
        <translation>&amp;Sunting pesan terakhir</translation>
    </message>
    <message>
        <source>&amp;Write a message</source>
        <translation>&amp;Tulis pesan</translation>
    </message>
    <message>
        <source>&amp;Paste as text in the message</source>
        <translation>&amp;Tempel sebagai teks di pesan</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>&amp;Tampilan</translation>
    </message>
    <message>
        <source>&amp;Metrics panel</source>
        <translation>Panel &amp;metrik</translation>
    </message>
    <message>
        <source>&amp;Conversation list</source>
        <translation>&amp;Daftar percakapan</translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation>&amp;Bahasa</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>Ba&amp;ntuan</translation>
    </message>
    <message>
        <source>The reply failed: {reason}</source>
        <translation>Balasan gagal: {reason}</translation>
    </message>
    <message>
        <source>Copied to the clipboard</source>
        <translation>Tersalin ke papan klip</translation>
    </message>
    <message>
        <source>{reason}. Choose a GGUF file from the Model menu.</source>
        <translation>{reason}. Pilih berkas GGUF dari menu Model.</translation>
    </message>
    <message>
        <source>Saved: the database takes writes again</source>
        <translation>Tersimpan: basis data dapat ditulisi lagi</translation>
    </message>
    <message>
        <source>Choose a model first (Model menu)</source>
        <translation>Pilih model terlebih dahulu (menu Model)</translation>
    </message>
</context>
<context>
    <name>MarkdownView</name>
    <message>
        <source>Code in {name}</source>
        <translation>Kode dalam {name}</translation>
    </message>
    <message>
        <source>Text of the message; links open in your browser</source>
        <translation>Isi pesan; tautan dibuka di peramban Anda</translation>
    </message>
</context>
<context>
    <name>MessageWidget</name>
    <message>
        <source>Copy</source>
        <translation>Salin</translation>
    </message>
    <message>
        <source>Copy the message to the clipboard</source>
        <translation>Salin pesan ke papan klip</translation>
    </message>
    <message>
        <source>Edit</source>
        <translation>Sunting</translation>
    </message>
    <message>
        <source>Edit this message in place and resend it</source>
        <translation>Sunting pesan ini di tempat dan kirim ulang</translation>
    </message>
    <message>
        <source>Regenerate</source>
        <translation>Buat ulang</translation>
    </message>
    <message>
        <source>Write this reply again</source>
        <translation>Tulis ulang balasan ini</translation>
    </message>
    <message>
        <source>Continue</source>
        <translation>Lanjutkan</translation>
    </message>
    <message>
        <source>Let the model go on writing this reply where it stopped</source>
        <translation>Biarkan model melanjutkan balasan ini dari tempat ia berhenti</translation>
    </message>
    <message>
        <source>Message from {speaker}</source>
        <translation>Pesan dari {speaker}</translation>
    </message>
    <message>
        <source>Your message</source>
        <translation>Pesan Anda</translation>
    </message>
</context>
<context>
    <name>Messages</name>
    <message>
        <source>You</source>
        <translation>Anda</translation>
    </message>
    <message>
        <source>Assistant</source>
        <translation>Asisten</translation>
    </message>
    <message>
        <source>System</source>
        <translation>Sistem</translation>
    </message>
    <message>
        <source>Interrupted: the runtime stopped</source>
        <translation>Terputus: runtime berhenti</translation>
    </message>
    <message>
        <source>Stopped</source>
        <translation>Dihentikan</translation>
    </message>
    <message>
        <source>Failed</source>
        <translation>Gagal</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>dihentikan</translation>
    </message>
    <message>
        <source>interrupted</source>
        <translation>terputus</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>gagal</translation>
    </message>
    <message>
        <source>Thinking…</source>
        <translation>Berpikir…</translation>
    </message>
    <message>
        <source>Thoughts</source>
        <translation>Pemikiran</translation>
    </message>
    <message>
        <source>Thought for {seconds} s</source>
        <translation>Berpikir selama {seconds} dtk</translation>
    </message>
    <message>
        <source>The reply was cut: the context is full.</source>
        <translation>Balasan terpotong: konteks sudah penuh.</translation>
    </message>
    <message>
        <source>The reply was cut at its length limit.</source>
        <translation>Balasan terpotong pada batas panjangnya.</translation>
    </message>
    <message numerus="yes">
        <source>⋯ %Ln more line(s)</source>
        <translation>
            <numerusform>⋯ %Ln baris lagi</numerusform>
        </translation>
    </message>
    <message>
        <source>⋯ long lines cut</source>
        <translation>⋯ baris panjang dipotong</translation>
    </message>
    <message numerus="yes">
        <source>%Ln line(s)</source>
        <translation>
            <numerusform>%Ln baris</numerusform>
        </translation>
    </message>
    <message>
        <source>{size}: more than this model&apos;s context of {n_ctx} holds with room to answer. Attach it as a file instead: the parts your question needs are found in it.</source>
        <translation>{size}: lebih dari yang dapat ditampung konteks model ini ({n_ctx}) dengan ruang untuk menjawab. Lampirkan sebagai berkas saja: bagian yang diperlukan pertanyaan Anda akan dicari di dalamnya.</translation>
    </message>
    <message>
        <source>{size}: the oldest messages will be left out of the context to make room</source>
        <translation>{size}: pesan-pesan terlama akan dikeluarkan dari konteks untuk memberi ruang</translation>
    </message>
    <message>
        <source>Attach the text as a file instead (the paperclip, or drop the file on the message box): a file too long for the context is searched for the parts your question needs.</source>
        <translation>Lampirkan teksnya sebagai berkas (klip kertas, atau jatuhkan berkas ke kotak pesan): berkas yang terlalu panjang untuk konteks akan dicari bagian-bagian yang diperlukan pertanyaan Anda.</translation>
    </message>
    <message>
        <source>This message needs {tokens} tokens of context, more than this model can read at once ({limit}).</source>
        <translation>Pesan ini memerlukan {tokens} token konteks, lebih dari yang dapat dibaca model ini sekaligus ({limit}).</translation>
    </message>
    <message>
        <source>This message needs {tokens} tokens of context, and this conversation has {n_ctx}.</source>
        <translation>Pesan ini memerlukan {tokens} token konteks, sedangkan percakapan ini memiliki {n_ctx}.</translation>
    </message>
    <message>
        <source>Or give the conversation a larger context, up to {limit} tokens (Ctrl+,).</source>
        <translation>Atau beri percakapan ini konteks yang lebih besar, hingga {limit} token (Ctrl+,).</translation>
    </message>
    <message>
        <source>Or give the conversation a larger context (Ctrl+,).</source>
        <translation>Atau beri percakapan ini konteks yang lebih besar (Ctrl+,).</translation>
    </message>
</context>
<context>
    <name>Metrics</name>
    <message>
        <source>{tokens}, {pictures} of them pictures</source>
        <translation>{tokens}, {pictures} di antaranya gambar</translation>
    </message>
    <message>
        <source>This reply</source>
        <translation>Balasan ini</translation>
    </message>
    <message>
        <source>Speculative decoding</source>
        <translation>Dekode spekulatif</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>Memori</translation>
    </message>
    <message>
        <source>Time to first token</source>
        <translation>Waktu hingga token pertama</translation>
    </message>
    <message>
        <source>Prompt reading speed</source>
        <translation>Kecepatan membaca prompt</translation>
    </message>
    <message>
        <source>Prompt</source>
        <translation>Prompt</translation>
    </message>
    <message>
        <source>Reused / newly read</source>
        <translation>Dipakai ulang / baru dibaca</translation>
    </message>
    <message>
        <source>Generated</source>
        <translation>Dihasilkan</translation>
    </message>
    <message>
        <source>Reply time</source>
        <translation>Waktu balasan</translation>
    </message>
    <message>
        <source>Context used</source>
        <translation>Konteks terpakai</translation>
    </message>
    <message>
        <source>KV cache</source>
        <translation>Cache KV</translation>
    </message>
    <message>
        <source>Runtime memory (RAM)</source>
        <translation>Memori runtime (RAM)</translation>
    </message>
    <message numerus="yes">
        <source>%Ln token(s)</source>
        <translation>
            <numerusform>%Ln token</numerusform>
        </translation>
    </message>
    <message>
        <source>{size} MB</source>
        <translation>{size} MB</translation>
    </message>
    <message>
        <source>{seconds} s</source>
        <translation>{seconds} dtk</translation>
    </message>
    <message>
        <source>{ms} ms</source>
        <translation>{ms} md</translation>
    </message>
    <message>
        <source>{rate} tok/s</source>
        <translation>{rate} token/dtk</translation>
    </message>
    <message>
        <source>{percent} %</source>
        <translation>{percent}%</translation>
    </message>
    <message>
        <source>{factor}× faster than plain decoding</source>
        <translation>{factor}× lebih cepat daripada dekode biasa</translation>
    </message>
    <message>
        <source>about as fast as plain decoding</source>
        <translation>kira-kira secepat dekode biasa</translation>
    </message>
    <message>
        <source>{factor}× the speed of plain decoding</source>
        <translation>{factor}× kecepatan dekode biasa</translation>
    </message>
    <message>
        <source>prompt lookup</source>
        <translation>pencarian prompt</translation>
    </message>
    <message>
        <source>draft model</source>
        <translation>model draf</translation>
    </message>
    <message>
        <source>prompt lookup, then draft model</source>
        <translation>pencarian prompt, lalu model draf</translation>
    </message>
    <message>
        <source>automatic</source>
        <translation>otomatis</translation>
    </message>
    <message>
        <source>Mode</source>
        <translation>Mode</translation>
    </message>
    <message>
        <source>Draft model</source>
        <translation>Model draf</translation>
    </message>
    <message>
        <source>{accepted} of {drafted} drafted ({rate})</source>
        <translation>{accepted} dari {drafted} didraf ({rate})</translation>
    </message>
    <message>
        <source>{used} / {total}</source>
        <translation>{used} / {total}</translation>
    </message>
    <message>
        <source>memory</source>
        <translation>memori</translation>
    </message>
    <message>
        <source>— ({tokens} read)</source>
        <translation>— ({tokens} dibaca)</translation>
    </message>
    <message>
        <source>disk</source>
        <translation>disk</translation>
    </message>
    <message>
        <source>cache</source>
        <translation>cache</translation>
    </message>
    <message>
        <source>{tokens} ({source}, {time})</source>
        <translation>{tokens} ({source}, {time})</translation>
    </message>
    <message>
        <source>Restored from cache</source>
        <translation>Dipulihkan dari cache</translation>
    </message>
    <message>
        <source>Time saved by the cache</source>
        <translation>Waktu yang dihemat cache</translation>
    </message>
    <message>
        <source>restored from cache, saved ≈ {time}</source>
        <translation>dipulihkan dari cache, hemat ≈ {time}</translation>
    </message>
    <message>
        <source>restored from cache</source>
        <translation>dipulihkan dari cache</translation>
    </message>
    <message>
        <source>a {architecture} model cannot take back part of its cache, so nothing is drafted</source>
        <translation>model {architecture} tidak dapat menarik kembali sebagian cache-nya, jadi tidak ada yang didrafkan</translation>
    </message>
    <message>
        <source>Speculation off</source>
        <translation>Spekulasi mati</translation>
    </message>
    <message>
        <source>Speed-up</source>
        <translation>Percepatan</translation>
    </message>
    <message>
        <source>Accepted</source>
        <translation>Diterima</translation>
    </message>
    <message>
        <source>Accepted per draft</source>
        <translation>Diterima per draf</translation>
    </message>
    <message numerus="yes">
        <source>{tokens} in %Ln pass(es)</source>
        <translation>
            <numerusform>{tokens} dalam %Ln lintasan</numerusform>
        </translation>
    </message>
    <message>
        <source>Per model pass</source>
        <translation>Per lintasan model</translation>
    </message>
    <message>
        <source>By prompt lookup</source>
        <translation>Oleh pencarian di prompt</translation>
    </message>
    <message>
        <source>By the draft model</source>
        <translation>Oleh model draf</translation>
    </message>
    <message>
        <source>{accepted} of {drafted} ({rate})</source>
        <translation>{accepted} dari {drafted} ({rate})</translation>
    </message>
    <message>
        <source>{mean} tokens</source>
        <translation>{mean} token</translation>
    </message>
    <message>
        <source>this model&apos;s chat template failed; using ChatML</source>
        <translation>templat obrolan model ini gagal; memakai ChatML</translation>
    </message>
    <message>
        <source>Time to first answer token</source>
        <translation>Waktu ke token jawaban pertama</translation>
    </message>
    <message>
        <source>{reused} / {evaluated}</source>
        <translation>{reused} / {evaluated}</translation>
    </message>
    <message>
        <source>{tokens}, context full</source>
        <translation>{tokens}, konteks penuh</translation>
    </message>
    <message>
        <source>Chat template</source>
        <translation>Templat obrolan</translation>
    </message>
    <message>
        <source>Left out (context full)</source>
        <translation>Dilewati (konteks penuh)</translation>
    </message>
    <message numerus="yes">
        <source>%Ln earlier message(s)</source>
        <translation>
            <numerusform>%Ln pesan sebelumnya</numerusform>
        </translation>
    </message>
    <message>
        <source>GPU memory ({device})</source>
        <translation>Memori GPU ({device})</translation>
    </message>
    <message>
        <source>{used} of {total}</source>
        <translation>{used} dari {total}</translation>
    </message>
    <message>
        <source>{tokens}, {time}</source>
        <translation>{tokens} selama {time}</translation>
    </message>
    <message>
        <source>Thinking</source>
        <translation>Berpikir</translation>
    </message>
    <message>
        <source>Answer</source>
        <translation>Jawaban</translation>
    </message>
    <message>
        <source>{loaded} ({asked} asked; fewer fit)</source>
        <translation>{loaded} ({asked} diminta; lebih sedikit yang muat)</translation>
    </message>
    <message>
        <source>Parallel replies</source>
        <translation>Balasan paralel</translation>
    </message>
    <message>
        <source>the GPU</source>
        <translation>GPU</translation>
    </message>
    <message>
        <source>{layers}/{total} layers on {device}</source>
        <translation>{layers}/{total} lapisan di {device}</translation>
    </message>
    <message>
        <source>(stepped down from {layers})</source>
        <translation>(diturunkan dari {layers})</translation>
    </message>
    <message>
        <source>all {total} layers on the CPU</source>
        <translation>semua {total} lapisan di CPU</translation>
    </message>
    <message>
        <source>GPU offload</source>
        <translation>Offload GPU</translation>
    </message>
    <message>
        <source>Last reply: failed</source>
        <translation>Balasan terakhir: gagal</translation>
    </message>
    <message>
        <source>Last reply: interrupted, the runtime stopped</source>
        <translation>Balasan terakhir: terputus, runtime berhenti</translation>
    </message>
    <message>
        <source>Last reply: complete</source>
        <translation>Balasan terakhir: selesai</translation>
    </message>
    <message>
        <source>Last reply: reached the token limit</source>
        <translation>Balasan terakhir: mencapai batas token</translation>
    </message>
    <message>
        <source>Last reply: stopped</source>
        <translation>Balasan terakhir: dihentikan</translation>
    </message>
    <message numerus="yes">
        <source>%Ln conversation(s)</source>
        <translation>
            <numerusform>%Ln percakapan</numerusform>
        </translation>
    </message>
    <message>
        <source>Last reply: asked to call a tool</source>
        <translation>Balasan terakhir: meminta pemanggilan alat</translation>
    </message>
    <message>
        <source>Last reply</source>
        <translation>Balasan terakhir</translation>
    </message>
</context>
<context>
    <name>MetricsPanel</name>
    <message>
        <source>Metrics</source>
        <translation>Metrik</translation>
    </message>
    <message>
        <source>Speed and memory figures of the latest reply, as the runtime measured them</source>
        <translation>Angka kecepatan dan memori balasan terakhir, sebagaimana diukur oleh runtime</translation>
    </message>
    <message>
        <source>Decode speed</source>
        <translation>Kecepatan dekode</translation>
    </message>
    <message>
        <source>Decode speed over the last 60 seconds</source>
        <translation>Kecepatan dekode selama 60 detik terakhir</translation>
    </message>
    <message>
        <source>last 60 s</source>
        <translation>60 dtk terakhir</translation>
    </message>
    <message>
        <source>No reply yet</source>
        <translation>Belum ada balasan</translation>
    </message>
    <message>
        <source>Streaming…</source>
        <translation>Mengalirkan…</translation>
    </message>
    <message>
        <source>Waiting for the first token…</source>
        <translation>Menunggu token pertama…</translation>
    </message>
</context>
<context>
    <name>ModelBrowserDialog</name>
    <message>
        <source>Models from Hugging Face</source>
        <translation>Model dari Hugging Face</translation>
    </message>
    <message>
        <source>Search Hugging Face for GGUF models (empty: the curated catalog)</source>
        <translation>Cari model GGUF di Hugging Face (kosong: katalog pilihan)</translation>
    </message>
    <message>
        <source>Search</source>
        <translation>Cari</translation>
    </message>
    <message>
        <source>Words to search Hugging Face for; empty shows the curated catalog</source>
        <translation>Kata yang dicari di Hugging Face; kosong menampilkan katalog pilihan</translation>
    </message>
    <message>
        <source>Search Hugging Face for these words</source>
        <translation>Cari kata-kata ini di Hugging Face</translation>
    </message>
    <message>
        <source>All kinds</source>
        <translation>Semua jenis</translation>
    </message>
    <message>
        <source>Kind</source>
        <translation>Jenis</translation>
    </message>
    <message>
        <source>Show only the catalog&apos;s models of this kind: reasoning, chat, coder, vision or embedding</source>
        <translation>Tampilkan hanya model katalog dengan jenis ini: penalaran, obrolan, kode, visi, atau penyematan</translation>
    </message>
    <message>
        <source>Pick a model on the left.</source>
        <translation>Pilih model di sebelah kiri.</translation>
    </message>
    <message>
        <source>Download</source>
        <translation>Unduh</translation>
    </message>
    <message>
        <source>Download the chosen quantization level into the Hugging Face cache</source>
        <translation>Unduh tingkat kuantisasi terpilih ke cache Hugging Face</translation>
    </message>
    <message>
        <source>Download with its draft model</source>
        <translation>Unduh bersama model drafnya</translation>
    </message>
    <message>
        <source>Download the chosen level and its draft partner, and load them together</source>
        <translation>Unduh level yang dipilih dan pasangan drafnya, lalu muat keduanya bersama</translation>
    </message>
    <message>
        <source>Models</source>
        <translation>Model</translation>
    </message>
    <message>
        <source>Models to choose from; the arrow keys move, the levels of the chosen one show on the right</source>
        <translation>Model yang dapat dipilih; tombol panah berpindah, tingkat kuantisasi model terpilih tampil di kanan</translation>
    </message>
    <message>
        <source>Quantization levels</source>
        <translation>Tingkat kuantisasi</translation>
    </message>
    <message>
        <source>Each level&apos;s size and whether it fits this machine</source>
        <translation>Ukuran setiap tingkat dan apakah muat di komputer ini</translation>
    </message>
    <message>
        <source>Context</source>
        <translation>Konteks</translation>
    </message>
    <message>
        <source>The context size the fit check assumes</source>
        <translation>Ukuran konteks yang diasumsikan pemeriksaan kecocokan</translation>
    </message>
    <message>
        <source>KV cache</source>
        <translation>Cache KV</translation>
    </message>
    <message>
        <source>The KV cache type the fit check assumes</source>
        <translation>Jenis cache KV yang diasumsikan pemeriksaan kecocokan</translation>
    </message>
    <message>
        <source>Searching for “{query}”…</source>
        <translation>Mencari “{query}”…</translation>
    </message>
    <message numerus="yes">
        <source>%n model(s) found for “{query}”</source>
        <translation>
            <numerusform>%n model ditemukan untuk “{query}”</numerusform>
        </translation>
    </message>
    <message>
        <source>no GGUF models found for “{query}”</source>
        <translation>tidak ada model GGUF untuk “{query}”</translation>
    </message>
    <message>
        <source>Draft partner for faster replies: {draft} (checking its tokenizer…)</source>
        <translation>Pasangan draf untuk balasan lebih cepat: {draft} (memeriksa tokenizer-nya…)</translation>
    </message>
    <message>
        <source>Reading {repo}: files, and one GGUF header for the fit check…</source>
        <translation>Membaca {repo}: daftar berkas, dan satu header GGUF untuk pemeriksaan kecocokan…</translation>
    </message>
    <message>
        <source>{repo}: {architecture}, {layers} layers, trained context {context}</source>
        <translation>{repo}: {architecture}, {layers} lapisan, konteks pelatihan {context}</translation>
    </message>
    <message numerus="yes">
        <source>%n quantization level(s)</source>
        <translation>
            <numerusform>%n tingkat kuantisasi</numerusform>
        </translation>
    </message>
    <message>
        <source>no GGUF files in this repository</source>
        <translation>tidak ada berkas GGUF di repositori ini</translation>
    </message>
    <message>
        <source>Draft partner for faster replies: {draft} (same tokenizer: compatible)</source>
        <translation>Pasangan draf untuk balasan lebih cepat: {draft} (tokenizer sama: kompatibel)</translation>
    </message>
    <message>
        <source>Draft partner {draft} does not match: {reasons}</source>
        <translation>Pasangan draf {draft} tidak cocok: {reasons}</translation>
    </message>
</context>
<context>
    <name>ModelButton</name>
    <message>
        <source>Choose the model and quantization</source>
        <translation>Pilih model dan kuantisasinya</translation>
    </message>
    <message>
        <source>Model: {name}</source>
        <translation>Model: {name}</translation>
    </message>
</context>
<context>
    <name>ModelStatus</name>
    <message>
        <source>No model</source>
        <translation>Tanpa model</translation>
    </message>
    <message>
        <source>Recovered: the runtime was restarted and {model} is loaded again. The interrupted reply was kept.</source>
        <translation>Pulih: runtime telah dimulai ulang dan {model} dimuat lagi. Balasan yang terputus tetap disimpan.</translation>
    </message>
    <message>
        <source>Could not load {file}: {reason}</source>
        <translation>Tidak dapat memuat {file}: {reason}</translation>
    </message>
    <message>
        <source>Restarting it and loading the model again…</source>
        <translation>Memulai ulang runtime dan memuat model lagi…</translation>
    </message>
</context>
<context>
    <name>PresetDetail</name>
    <message>
        <source>(no system prompt)</source>
        <translation>(tanpa prompt sistem)</translation>
    </message>
    <message>
        <source>Model: {path}</source>
        <translation>Berkas model: {path}</translation>
    </message>
    <message>
        <source>Built in</source>
        <translation>Bawaan</translation>
    </message>
</context>
<context>
    <name>PresetMenu</name>
    <message>
        <source>New chat from &amp;preset…</source>
        <translation>Obrolan baru dari &amp;preset…</translation>
    </message>
    <message>
        <source>Save chat settings as &amp;preset…</source>
        <translation>Simpan pengaturan obrolan sebagai &amp;preset…</translation>
    </message>
    <message>
        <source>Saved the preset “{name}”</source>
        <translation>Preset “{name}” disimpan</translation>
    </message>
</context>
<context>
    <name>PresetPicker</name>
    <message>
        <source>New chat from preset</source>
        <translation>Obrolan baru dari preset</translation>
    </message>
    <message>
        <source>Presets</source>
        <translation>Daftar preset</translation>
    </message>
    <message>
        <source>&amp;Start chat</source>
        <translation>&amp;Mulai obrolan</translation>
    </message>
    <message>
        <source>&amp;Import…</source>
        <translation>&amp;Impor…</translation>
    </message>
    <message>
        <source>E&amp;xport all…</source>
        <translation>E&amp;kspor semua…</translation>
    </message>
    <message>
        <source>&amp;Delete</source>
        <translation>&amp;Hapus</translation>
    </message>
    <message>
        <source>The chat could not start from this preset: {reason}</source>
        <translation>Obrolan tidak dapat dimulai dari preset ini: {reason}</translation>
    </message>
    <message>
        <source>Import presets</source>
        <translation>Impor preset</translation>
    </message>
    <message>
        <source>Presets (*.json)</source>
        <translation>Berkas preset (*.json)</translation>
    </message>
    <message>
        <source>Export presets</source>
        <translation>Ekspor preset</translation>
    </message>
    <message>
        <source>Nothing was imported from {file}: {reason}</source>
        <translation>Tidak ada yang diimpor dari {file}: {reason}</translation>
    </message>
    <message>
        <source>Imported {added}; {skipped} already there; {renamed} under a new name.</source>
        <translation>Diimpor {added}; {skipped} sudah ada; {renamed} dengan nama baru.</translation>
    </message>
    <message>
        <source>The presets could not be exported: {reason}</source>
        <translation>Preset tidak dapat diekspor: {reason}</translation>
    </message>
    <message>
        <source>Exported {count} presets to {file}</source>
        <translation>{count} preset diekspor ke {file}</translation>
    </message>
</context>
<context>
    <name>Presets</name>
    <message>
        <source>General assistant</source>
        <translation>Asisten umum</translation>
    </message>
    <message>
        <source>You are a helpful assistant. Answer clearly and concisely, and say so when you are not sure.</source>
        <translation>Anda adalah asisten yang membantu. Jawablah dengan jelas dan ringkas, dan katakan bila Anda tidak yakin.</translation>
    </message>
    <message>
        <source>Code reviewer</source>
        <translation>Peninjau kode</translation>
    </message>
    <message>
        <source>You are a careful senior software engineer reviewing code. Point out bugs, risky patterns and unclear names, the most important first, and suggest concrete fixes with short code examples.</source>
        <translation>Anda adalah insinyur perangkat lunak senior yang teliti dan sedang meninjau kode. Tunjukkan bug, pola yang berisiko, dan nama yang tidak jelas, yang terpenting lebih dulu, lalu sarankan perbaikan konkret dengan contoh kode singkat.</translation>
    </message>
    <message>
        <source>Translator English ↔ Indonesian</source>
        <translation>Penerjemah Inggris ↔ Indonesia</translation>
    </message>
    <message>
        <source>You are a translator. If the user&apos;s text is in English, translate it into Indonesian; otherwise translate it into English. Keep the meaning, the tone and the formatting, and reply with the translation only.</source>
        <translation>Anda adalah penerjemah. Jika teks pengguna berbahasa Inggris, terjemahkan ke bahasa Indonesia; jika tidak, terjemahkan ke bahasa Inggris. Pertahankan makna, nada, dan formatnya, dan balas hanya dengan terjemahannya.</translation>
    </message>
    <message>
        <source>Creative writer</source>
        <translation>Penulis kreatif</translation>
    </message>
    <message>
        <source>You are an imaginative writer. Write vivid, original prose and verse in the style the user asks for.</source>
        <translation>Anda adalah penulis yang imajinatif. Tulislah prosa dan puisi yang hidup dan orisinal dengan gaya yang diminta pengguna.</translation>
    </message>
    <message>
        <source>Precise answers</source>
        <translation>Jawaban tepat</translation>
    </message>
    <message>
        <source>Answer precisely and briefly. Give facts, steps or numbers, without filler.</source>
        <translation>Jawablah dengan tepat dan singkat. Berikan fakta, langkah, atau angka, tanpa basa-basi.</translation>
    </message>
    <message>
        <source>The preset&apos;s model is not on this machine ({path}): the chat uses the model in use.</source>
        <translation>Model preset ini tidak ada di komputer ini ({path}): obrolan memakai model yang sedang digunakan.</translation>
    </message>
    <message>
        <source>A reply is being written, so the preset&apos;s model was not loaded: choose the preset again once it ends.</source>
        <translation>Sebuah balasan sedang ditulis, jadi model preset tidak dimuat: pilih preset itu lagi setelah balasan selesai.</translation>
    </message>
    <message>
        <source>The new chat could not be stored: the database refused it.</source>
        <translation>Obrolan baru tidak dapat disimpan: basis data menolaknya.</translation>
    </message>
</context>
<context>
    <name>Remote</name>
    <message>
        <source>Remote endpoint: {reason}</source>
        <translation>Endpoint jarak jauh: {reason}</translation>
    </message>
    <message>
        <source>Remote</source>
        <translation>Jarak jauh</translation>
    </message>
    <message>
        <source>Add remote endpoint…</source>
        <translation>Tambah endpoint jarak jauh…</translation>
    </message>
    <message>
        <source>The key for {name} is stored in {file}</source>
        <translation>Kunci untuk {name} disimpan di {file}</translation>
    </message>
    <message>
        <source>The key for {name} is used until Lokal quits and stored nowhere</source>
        <translation>Kunci untuk {name} dipakai sampai Lokal ditutup dan tidak disimpan di mana pun</translation>
    </message>
    <message>
        <source>Wait for the replies to finish (or stop them) before switching models.</source>
        <translation>Tunggu balasan-balasan selesai (atau hentikan) sebelum berganti model.</translation>
    </message>
    <message>
        <source>Chatting with {model} on {url}</source>
        <translation>Mengobrol dengan {model} di {url}</translation>
    </message>
</context>
<context>
    <name>RuntimeLink</name>
    <message>
        <source>the runtime refused to start: {reason}</source>
        <translation>runtime menolak dimulai: {reason}</translation>
    </message>
    <message>
        <source>it exited with code {code}</source>
        <translation>runtime keluar dengan kode {code}</translation>
    </message>
    <message>
        <source>it was killed by {signal} (llama.cpp aborted)</source>
        <translation>runtime dihentikan oleh {signal} (llama.cpp berhenti paksa)</translation>
    </message>
    <message>
        <source>it was killed by {signal}</source>
        <translation>runtime dihentikan oleh {signal}</translation>
    </message>
    <message>
        <source>The Lokal runtime could not be started ({command}): {reason}.</source>
        <translation>Runtime Lokal tidak dapat dimulai ({command}): {reason}.</translation>
    </message>
    <message>
        <source>The Lokal runtime stopped unexpectedly: {how}.</source>
        <translation>Runtime Lokal berhenti tiba-tiba: {how}.</translation>
    </message>
</context>
<context>
    <name>SavePresetDialog</name>
    <message>
        <source>Save as preset</source>
        <translation>Simpan sebagai preset</translation>
    </message>
    <message>
        <source>Name of the preset</source>
        <translation>Nama preset</translation>
    </message>
    <message>
        <source>With the model in use and its load settings ({name})</source>
        <translation>Beserta model yang sedang dipakai dan pengaturan muatnya ({name})</translation>
    </message>
    <message>
        <source>With the model in use (none is)</source>
        <translation>Beserta model yang sedang dipakai (tidak ada)</translation>
    </message>
    <message>
        <source>The chat&apos;s system prompt and sampling settings become a preset for new chats.</source>
        <translation>Prompt sistem dan pengaturan sampling obrolan ini menjadi preset untuk obrolan baru.</translation>
    </message>
</context>
<context>
    <name>Search</name>
    <message>
        <source>Search all &amp;conversations…</source>
        <translation>Cari di semua &amp;percakapan…</translation>
    </message>
    <message>
        <source>&amp;Find in this conversation…</source>
        <translation>&amp;Cari di percakapan ini…</translation>
    </message>
    <message>
        <source>That conversation is no longer there</source>
        <translation>Percakapan itu sudah tidak ada</translation>
    </message>
    <message>
        <source>That message is no longer there</source>
        <translation>Pesan itu sudah tidak ada</translation>
    </message>
</context>
<context>
    <name>SearchDialog</name>
    <message>
        <source>Search</source>
        <translation>Cari</translation>
    </message>
    <message>
        <source>Messages found</source>
        <translation>Pesan yang ditemukan</translation>
    </message>
    <message>
        <source>The search failed: {reason}</source>
        <translation>Pencarian gagal: {reason}</translation>
    </message>
    <message>
        <source>Search all conversations</source>
        <translation>Cari di semua percakapan</translation>
    </message>
    <message>
        <source>Search every message of every conversation</source>
        <translation>Cari di setiap pesan dari setiap percakapan</translation>
    </message>
    <message>
        <source>Find in “{title}”</source>
        <translation>Cari di “{title}”</translation>
    </message>
    <message>
        <source>Search this conversation</source>
        <translation>Cari di percakapan ini</translation>
    </message>
    <message>
        <source>Searching…</source>
        <translation>Mencari…</translation>
    </message>
    <message>
        <source>No message contains this</source>
        <translation>Tidak ada pesan yang memuat ini</translation>
    </message>
    <message>
        <source>Found: {count}{more} (whole words first, then newest first)</source>
        <translation>Ditemukan: {count}{more} (kata utuh lebih dulu, lalu yang terbaru)</translation>
    </message>
</context>
<context>
    <name>ShortcutsDialog</name>
    <message>
        <source>Keyboard shortcuts</source>
        <translation>Pintasan papan ketik</translation>
    </message>
    <message>
        <source>Every other command is in a menu: Alt and the underlined letter opens it, the arrow keys and Enter choose. Tab moves between the conversation list, the messages and the message box.</source>
        <translation>Perintah lainnya ada di menu: Alt dan huruf bergaris bawah membukanya, tombol panah dan Enter memilih. Tab berpindah antara daftar percakapan, pesan-pesan, dan kotak pesan.</translation>
    </message>
    <message>
        <source>Menu</source>
        <translation>Menu</translation>
    </message>
    <message>
        <source>Command</source>
        <translation>Perintah</translation>
    </message>
    <message>
        <source>Shortcut</source>
        <translation>Pintasan</translation>
    </message>
    <message>
        <source>One row per command: its menu, its name and its keys</source>
        <translation>Satu baris per perintah: menunya, namanya, dan tombolnya</translation>
    </message>
</context>
<context>
    <name>Sidebar</name>
    <message>
        <source>New chat</source>
        <translation>Obrolan baru</translation>
    </message>
    <message>
        <source>New chat (Ctrl+N)</source>
        <translation>Obrolan baru (Ctrl+N)</translation>
    </message>
    <message>
        <source>Start a new conversation</source>
        <translation>Mulai percakapan baru</translation>
    </message>
    <message>
        <source>Filter by title</source>
        <translation>Saring menurut judul</translation>
    </message>
    <message>
        <source>Filter conversations</source>
        <translation>Saring percakapan</translation>
    </message>
    <message>
        <source>Show only the conversations whose title contains this text</source>
        <translation>Tampilkan hanya percakapan yang judulnya memuat teks ini</translation>
    </message>
    <message>
        <source>Conversations</source>
        <translation>Percakapan</translation>
    </message>
    <message>
        <source>Newest first. Enter opens one; the context menu key renames, exports or deletes it</source>
        <translation>Terbaru di atas. Enter membuka percakapan; tombol menu konteks mengganti nama, mengekspor, atau menghapusnya</translation>
    </message>
    <message>
        <source>&amp;Rename…</source>
        <translation>&amp;Ganti nama…</translation>
    </message>
    <message>
        <source>Export as &amp;Markdown…</source>
        <translation>Ekspor sebagai &amp;Markdown…</translation>
    </message>
    <message>
        <source>Export as &amp;JSON…</source>
        <translation>Ekspor sebagai &amp;JSON…</translation>
    </message>
    <message>
        <source>&amp;Delete</source>
        <translation>&amp;Hapus</translation>
    </message>
</context>
<context>
    <name>StarterFetch</name>
    <message>
        <source>Fetching the starter model…</source>
        <translation>Mengambil model awal…</translation>
    </message>
    <message>
        <source>Fetching the starter model: {done} of {total} MB</source>
        <translation>Mengambil model awal: {done} dari {total} MB</translation>
    </message>
    <message>
        <source>could not fetch the starter model: {reason}</source>
        <translation>model awal tidak dapat diambil: {reason}</translation>
    </message>
    <message>
        <source>the fetch exited with code {code}</source>
        <translation>pengambilan berhenti dengan kode {code}</translation>
    </message>
</context>
<context>
    <name>Startup</name>
    <message>
        <source>Lokal cannot start</source>
        <translation>Lokal tidak dapat dimulai</translation>
    </message>
    <message>
        <source>Lokal cannot use its data folder: {reason}</source>
        <translation>Lokal tidak dapat memakai folder datanya: {reason}</translation>
    </message>
    <message>
        <source>Lokal is already running</source>
        <translation>Lokal sudah berjalan</translation>
    </message>
    <message>
        <source>Another Lokal window is open but does not answer. If it hangs, close it (or end it in your task manager), then start Lokal again.</source>
        <translation>Jendela Lokal lain sedang terbuka tetapi tidak merespons. Jika macet, tutup jendela itu (atau hentikan lewat pengelola tugas), lalu mulai Lokal lagi.</translation>
    </message>
    <message>
        <source>Lokal is older than your conversations</source>
        <translation>Lokal ini lebih lama daripada percakapan Anda</translation>
    </message>
    <message>
        <source>Your conversations were saved by a newer version of Lokal (database schema {found}); this Lokal knows schema {known} at most.

Install the newer Lokal to open them. This version has left the file untouched:
{path}</source>
        <translation>Percakapan Anda disimpan oleh Lokal versi yang lebih baru (skema basis data {found}); Lokal ini hanya mengenal hingga skema {known}.

Pasang Lokal yang lebih baru untuk membukanya. Versi ini tidak mengubah berkas tersebut:
{path}</translation>
    </message>
    <message>
        <source>Lokal cannot open your conversations</source>
        <translation>Lokal tidak dapat membuka percakapan Anda</translation>
    </message>
    <message>
        <source>Retry</source>
        <translation>Coba lagi</translation>
    </message>
    <message>
        <source>Quit</source>
        <translation>Keluar</translation>
    </message>
</context>
<context>
    <name>StatusLine</name>
    <message>
        <source>No model loaded</source>
        <translation>Belum ada model yang dimuat</translation>
    </message>
    <message>
        <source>Generating…</source>
        <translation>Membuat balasan…</translation>
    </message>
    <message numerus="yes">
        <source>(%n waiting)</source>
        <translation>
            <numerusform>(%n menunggu)</numerusform>
        </translation>
    </message>
    <message>
        <source>Runtime stopped</source>
        <translation>Runtime berhenti</translation>
    </message>
    <message>
        <source>Starting the runtime…</source>
        <translation>Memulai runtime…</translation>
    </message>
    <message>
        <source>Ready</source>
        <translation>Siap</translation>
    </message>
    <message>
        <source>Working…</source>
        <translation>Sedang bekerja…</translation>
    </message>
    <message>
        <source>Runtime crashed</source>
        <translation>Runtime mogok</translation>
    </message>
    <message>
        <source>Restarting the runtime…</source>
        <translation>Memulai ulang runtime…</translation>
    </message>
    <message>
        <source>Loading {file}…</source>
        <translation>Memuat {file}…</translation>
    </message>
    <message>
        <source>{path}
context {n_ctx} tokens, loaded in {ms} ms</source>
        <translation>{path}
konteks {n_ctx} token, dimuat dalam {ms} md</translation>
    </message>
</context>
<context>
    <name>StoreFaults</name>
    <message>
        <source>Your conversations database is in use by another program (the database is locked).</source>
        <translation>Basis data percakapan Anda sedang dipakai program lain (basis data terkunci).</translation>
    </message>
    <message>
        <source>Close any other program that has it open (a backup or sync tool, or another copy of Lokal), then retry.</source>
        <translation>Tutup program lain yang membukanya (alat pencadangan atau sinkronisasi, atau salinan Lokal yang lain), lalu coba lagi.</translation>
    </message>
    <message>
        <source>Lokal cannot write to its conversations database: the file or its folder is read-only.</source>
        <translation>Lokal tidak dapat menulis ke basis data percakapannya: berkas atau foldernya hanya-baca.</translation>
    </message>
    <message>
        <source>Make the folder writable again (check its permissions, or whether the drive was mounted read-only), then retry.</source>
        <translation>Jadikan folder itu dapat ditulisi lagi (periksa izinnya, atau apakah drive dipasang sebagai hanya-baca), lalu coba lagi.</translation>
    </message>
    <message>
        <source>The disk that holds your conversations is full.</source>
        <translation>Disk yang menyimpan percakapan Anda penuh.</translation>
    </message>
    <message>
        <source>Free some space on it, then retry. Nothing is lost meanwhile: what could not be saved is kept until it can be.</source>
        <translation>Kosongkan sebagian ruangnya, lalu coba lagi. Sementara itu tidak ada yang hilang: yang belum dapat disimpan tetap disimpan sampai bisa ditulis.</translation>
    </message>
    <message>
        <source>The disk reported an error while reading or writing your conversations (disk I/O error).</source>
        <translation>Disk melaporkan galat saat membaca atau menulis percakapan Anda (galat I/O disk).</translation>
    </message>
    <message>
        <source>Check the drive (was it unplugged, or is it failing?), then retry.</source>
        <translation>Periksa drive-nya (apakah tercabut, atau mulai rusak?), lalu coba lagi.</translation>
    </message>
    <message>
        <source>Lokal cannot open its conversations database.</source>
        <translation>Lokal tidak dapat membuka basis data percakapannya.</translation>
    </message>
    <message>
        <source>Check that the data folder exists and that you may write to it, then retry.</source>
        <translation>Pastikan folder data ada dan Anda boleh menulis ke dalamnya, lalu coba lagi.</translation>
    </message>
    <message>
        <source>Your conversations database was found damaged while Lokal was running.</source>
        <translation>Basis data percakapan Anda ternyata rusak saat Lokal sedang berjalan.</translation>
    </message>
    <message>
        <source>Quit and start Lokal again: it keeps the damaged file aside, with everything it holds, and starts a new one.</source>
        <translation>Keluar lalu mulai Lokal lagi: Lokal menyisihkan berkas yang rusak beserta seluruh isinya, lalu memulai berkas baru.</translation>
    </message>
    <message>
        <source>Lokal could not use its conversations database.</source>
        <translation>Lokal tidak dapat memakai basis data percakapannya.</translation>
    </message>
    <message>
        <source>Retry; if it keeps failing, the log folder (Help menu) has the details.</source>
        <translation>Coba lagi; jika terus gagal, rinciannya ada di folder log (menu Bantuan).</translation>
    </message>
    <message>
        <source>Your conversations file was damaged ({reason}). It was kept, with everything it holds, as {file} (in {folder}), and a new one was started.</source>
        <translation>Berkas percakapan Anda rusak ({reason}). Berkas itu disimpan beserta seluruh isinya sebagai {file} (di {folder}), dan berkas baru telah dimulai.</translation>
    </message>
</context>
<context>
    <name>ThinkingBlock</name>
    <message>
        <source>Show or hide how the model thought before it answered</source>
        <translation>Tampilkan atau sembunyikan cara model berpikir sebelum menjawab</translation>
    </message>
    <message>
        <source>The model&apos;s thinking</source>
        <translation>Pemikiran model</translation>
    </message>
</context>
<context>
    <name>Thumbnail</name>
    <message>
        <source>{name}: click to see it whole</source>
        <translation>{name}: klik untuk melihatnya utuh</translation>
    </message>
    <message>
        <source>Picture {name}</source>
        <translation>Gambar {name}</translation>
    </message>
    <message>
        <source>Opens the picture at full size</source>
        <translation>Membuka gambar dalam ukuran penuh</translation>
    </message>
</context>
<context>
    <name>TopBar</name>
    <message>
        <source>New chat</source>
        <translation>Obrolan baru</translation>
    </message>
    <message>
        <source>No model</source>
        <translation>Tanpa model</translation>
    </message>
    <message>
        <source>Choose the model and quantization (Alt+M opens the Model menu)</source>
        <translation>Pilih model dan kuantisasinya (Alt+M membuka menu Model)</translation>
    </message>
    <message>
        <source>Conversation settings (Ctrl+,)</source>
        <translation>Pengaturan percakapan (Ctrl+,)</translation>
    </message>
    <message>
        <source>Conversation settings</source>
        <translation>Pengaturan percakapan</translation>
    </message>
    <message>
        <source>System prompt, sampling and context size of this conversation</source>
        <translation>Prompt sistem, sampling, dan ukuran konteks percakapan ini</translation>
    </message>
    <message>
        <source>Show the metrics panel (Ctrl+Shift+M)</source>
        <translation>Tampilkan panel metrik (Ctrl+Shift+M)</translation>
    </message>
    <message>
        <source>Metrics panel</source>
        <translation>Panel metrik</translation>
    </message>
    <message>
        <source>Show or hide the speed and memory figures</source>
        <translation>Tampilkan atau sembunyikan angka kecepatan dan memori</translation>
    </message>
</context>
<context>
    <name>UnsavedReplies</name>
    <message>
        <source>Unsaved replies</source>
        <translation>Balasan belum tersimpan</translation>
    </message>
    <message numerus="yes">
        <source>%n message(s) could not be saved yet.</source>
        <translation>
            <numerusform>%n pesan belum dapat disimpan.</numerusform>
        </translation>
    </message>
    <message>
        <source>Retry</source>
        <translation>Coba lagi</translation>
    </message>
    <message>
        <source>Quit without saving</source>
        <translation>Keluar tanpa menyimpan</translation>
    </message>
</context>
<context>
    <name>Welcome</name>
    <message>
        <source>Browse models…</source>
        <translation>Jelajahi model…</translation>
    </message>
    <message>
        <source>Browse models</source>
        <translation>Jelajahi model</translation>
    </message>
    <message>
        <source>Find a larger model on Hugging Face, with what it needs of this machine</source>
        <translation>Cari model yang lebih besar di Hugging Face, beserta kebutuhannya pada mesin ini</translation>
    </message>
    <message>
        <source>Try one of these:</source>
        <translation>Coba salah satu ini:</translation>
    </message>
    <message>
        <source>Explain how a rainbow forms, in three sentences.</source>
        <translation>Jelaskan bagaimana pelangi terbentuk, dalam tiga kalimat.</translation>
    </message>
    <message>
        <source>Write a Python function that checks whether a word is a palindrome.</source>
        <translation>Tulis fungsi Python yang memeriksa apakah sebuah kata adalah palindrom.</translation>
    </message>
    <message>
        <source>Draft a short, polite email asking to move a meeting to Friday.</source>
        <translation>Buat draf email singkat dan sopan untuk meminta rapat dipindah ke hari Jumat.</translation>
    </message>
    <message>
        <source>Put this question in the message box</source>
        <translation>Masukkan pertanyaan ini ke kotak pesan</translation>
    </message>
    <message>
        <source>Chat with {model}</source>
        <translation>Mengobrol dengan {model}</translation>
    </message>
    <message>
        <source>on the GPU</source>
        <translation>di GPU</translation>
    </message>
    <message>
        <source>on the CPU</source>
        <translation>di CPU</translation>
    </message>
    <message>
        <source>{quantization}, {place} of this machine. Your messages stay here.</source>
        <translation>{quantization}, {place} mesin ini. Pesan Anda tetap di sini.</translation>
    </message>
    <message>
        <source>This is the small starter model: quick, but it often gets facts wrong. A larger model answers much better.</source>
        <translation>Ini model awal yang kecil: cepat, tetapi sering keliru soal fakta. Model yang lebih besar menjawab jauh lebih baik.</translation>
    </message>
    <message>
        <source>Replies come from the remote endpoint you chose: your messages are sent there.</source>
        <translation>Balasan datang dari endpoint jarak jauh yang Anda pilih: pesan Anda dikirim ke sana.</translation>
    </message>
    <message>
        <source>Getting the model ready…</source>
        <translation>Menyiapkan model…</translation>
    </message>
    <message>
        <source>Loading {file}. You can write your first message meanwhile.</source>
        <translation>Memuat {file}. Sementara itu Anda bisa menulis pesan pertama.</translation>
    </message>
    <message>
        <source>No model is loaded</source>
        <translation>Belum ada model yang dimuat</translation>
    </message>
    <message>
        <source>Choose one in the Model menu, or open a GGUF file. Your messages stay on this machine.</source>
        <translation>Pilih satu di menu Model, atau buka berkas GGUF. Pesan Anda tetap di mesin ini.</translation>
    </message>
    <message>
        <source>No model on this machine yet? Find one that fits it.</source>
        <translation>Belum ada model di mesin ini? Cari yang cocok untuknya.</translation>
    </message>
</context>
</TS>
